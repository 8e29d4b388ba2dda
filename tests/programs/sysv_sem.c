/* System V semaphores read back whole (semctl GETALL writes one short per semaphore), and
 * the names of file system types (sysfs). */
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <unistd.h>

union semun {
    int val;
    struct semid_ds *buf;
    unsigned short *array;
};

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int id = semget(IPC_PRIVATE, 5, 0600);
    if (id < 0)
        return 1;
    unsigned short set[5] = {3, 1, 4, 1, 5}, got[6] = {9, 9, 9, 9, 9, 9};
    union semun arg = {.array = set};
    semctl(id, 0, SETALL, arg);
    arg.array = got;
    printf("GETALL: %d\n", semctl(id, 0, GETALL, arg));
    printf("values: %d %d %d %d %d, guard %d\n", got[0], got[1], got[2], got[3], got[4], got[5]);
    semctl(id, 0, IPC_RMID);
    char name[64] = "unchanged";
    long r = syscall(SYS_sysfs, 2, 0, name);
    printf("sysfs: %ld, first type named %s\n", r, r == 0 ? name : "?");
    return 0;
}
