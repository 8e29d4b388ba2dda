/* A poll with a timeout, interrupted by a signal that has no handler (the kernel restarts it
 * through restart_syscall), then woken by data: what the restarted call wrote (revents) is
 * what the program sees. */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  int fds[2];
  if (pipe(fds) != 0) return 1;
  for (int round = 0; round < 3; round++) {
    pid_t child = fork();
    if (child == 0) {
      /* SIGWINCH is ignored by default: it interrupts the parent's poll only for a tracer. */
      kill(getppid(), SIGWINCH);
      usleep(50000);
      if (write(fds[1], "x", 1) != 1) _exit(1);
      _exit(0);
    }
    struct pollfd p = {.fd = fds[0], .events = POLLIN, .revents = 0};
    int n = poll(&p, 1, 5000);
    char c = 0;
    ssize_t got = (p.revents & POLLIN) ? read(fds[0], &c, 1) : -1;
    printf("round %d: poll %d revents %#x read %zd '%c'\n", round, n, p.revents, got, c);
    waitpid(child, NULL, 0);
  }
  return 0;
}
