/* System V shared memory: one segment attached twice (the attachments alias), written by a
 * forked child through its inherited attachment, detached (the address is free again: a
 * mapping asked for there gets it), and detached after part of it was unmapped. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  long page = sysconf(_SC_PAGESIZE);
  size_t size = 3 * page - 10;
  int id = shmget(IPC_PRIVATE, size, 0600 | IPC_CREAT);
  if (id < 0) {
    printf("shmget: unavailable\n");
    return 0;
  }
  char *p = shmat(id, NULL, 0);
  char *q = shmat(id, NULL, 0);
  strcpy(p, "written through the first attachment");
  printf("second attachment reads: %s\n", q);
  pid_t child = fork();
  if (child == 0) {
    strcpy(q + page, "written by the child");
    _exit(0);
  }
  waitpid(child, NULL, 0);
  printf("after the child: %s\n", p + page);
  struct shmid_ds ds;
  shmctl(id, IPC_STAT, &ds);
  printf("size %zu, attached %lu times\n", (size_t)ds.shm_segsz, (unsigned long)ds.shm_nattch);
  printf("shmdt first: %d\n", shmdt(p));
  char *m = mmap(p, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  printf("mapping at its old address: %s, holds %d\n", m == p ? "granted" : "elsewhere", m[0]);
  munmap(m, page);
  /* The second attachment loses its first page, then goes. */
  munmap(q, page);
  printf("shmdt second: %d\n", shmdt(q));
  char *again = shmat(id, NULL, SHM_RDONLY);
  printf("read-only attachment: %s / %s\n", again, again + page);
  shmdt(again);
  shmctl(id, IPC_RMID, NULL);
  return 0;
}
