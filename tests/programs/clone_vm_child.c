/* A child made with clone(CLONE_VM) (no CLONE_VFORK, no CLONE_THREAD) runs beside its parent
 * in the same memory: both make syscalls at the same time while the parent is blocked in a
 * read. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int fds[2];
static volatile long child_calls;

static int child(void *arg) {
  (void)arg;
  /* Many syscalls while the parent waits in its read. */
  for (int i = 0; i < 2000; i++) {
    if (getppid() > 0) child_calls++;
  }
  char msg[32];
  int len = snprintf(msg, sizeof msg, "calls %ld", child_calls);
  if (write(fds[1], msg, len) != len) return 1;
  return 0;
}

int main(void) {
  if (pipe(fds) != 0) return 1;
  size_t size = 1 << 20;
  char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (stack == MAP_FAILED) return 1;
  pid_t pid = clone(child, stack + size, CLONE_VM | SIGCHLD, NULL);
  if (pid < 0) return 1;
  char buf[64] = {0};
  ssize_t n = read(fds[0], buf, sizeof buf - 1);
  int status = 0;
  waitpid(pid, &status, 0);
  printf("parent read %zd bytes: %s; child exit %d\n", n, buf, WEXITSTATUS(status));
  /* The parent goes on making syscalls after its child is gone. */
  for (int i = 0; i < 3; i++) printf("after %d: pid matches %d\n", i, getpid() == pid ? 0 : 1);
  return 0;
}
