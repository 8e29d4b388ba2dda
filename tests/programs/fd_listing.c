/* Lists its own descriptors (/proc/self/fd and /proc/self/task/TID/fd) after threads blocked
 * in reads, then exits while threads still sleep: a debugger's descriptors must not show. */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define THREADS 4
static int pipes[THREADS][2];
static pthread_barrier_t bar;

static void *reader(void *arg) {
  long i = (long)arg;
  char c;
  /* Blocks until main writes. */
  if (read(pipes[i][0], &c, 1) != 1) abort();
  pthread_barrier_wait(&bar);
  sleep(2);
  return NULL;
}

static void list(const char *path) {
  DIR *d = opendir(path);
  if (!d) {
    perror(path);
    exit(1);
  }
  int fds[256], n = 0, self = dirfd(d);
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < 256) {
    if (e->d_name[0] == '.') continue;
    int fd = atoi(e->d_name);
    if (fd != self) fds[n++] = fd;
  }
  closedir(d);
  printf("%s:", strncmp(path, "/proc/self/task", 15) == 0 ? "task fd" : "fd");
  for (int i = 0; i < n; i++) printf(" %d", fds[i]);
  printf("\n");
}

int main(void) {
  pthread_barrier_init(&bar, NULL, THREADS + 1);
  pthread_t t[THREADS];
  for (long i = 0; i < THREADS; i++) {
    if (pipe(pipes[i]) != 0) return 1;
    pthread_create(&t[i], NULL, reader, (void *)i);
  }
  usleep(100000);
  for (int i = 0; i < THREADS; i++)
    if (write(pipes[i][1], "x", 1) != 1) return 1;
  pthread_barrier_wait(&bar);
  list("/proc/self/fd");
  char task[64];
  snprintf(task, sizeof task, "/proc/self/task/%ld/fd", (long)syscall(SYS_gettid));
  list(task);
  fflush(stdout);
  /* Exit while the threads sleep. */
  return 0;
}
