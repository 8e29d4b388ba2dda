/* Record/replay test: memory shared with other processes or changed by syscalls. A forked
 * child writes a random value into anonymous MAP_SHARED memory, which the parent reads after
 * waiting for it; the parent writes into a file with write() and reads the change through a
 * MAP_SHARED mapping of that file. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    volatile unsigned long *shared =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED)
        return 2;
    pid_t child = fork();
    if (child == 0) {
        shared[1] = __rdtsc() % 1000003;
        _exit(0);
    }
    waitpid(child, NULL, 0);
    unsigned long from_child = shared[1];

    char path[] = "/tmp/rr_shared-XXXXXX";
    int fd = mkstemp(path);
    unlink(path);
    if (fd < 0 || ftruncate(fd, 4096) != 0)
        return 3;
    volatile char *view = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    if (view == MAP_FAILED)
        return 4;
    char digit = '0' + (char)(__rdtsc() % 10);
    pwrite(fd, &digit, 1, 100);
    int seen = view[100] - '0';

    printf("from_child=%lu\n", from_child); /* BREAK-HERE */
    printf("seen=%d\n", seen);
    return 0;
}
