/* A child stops itself (SIGSTOP, then SIGTSTP with its default action); its parent sees it
 * stopped with waitpid(WUNTRACED), sees it still there with WNOHANG, continues it with SIGCONT
 * and sees it continue (WCONTINUED) and end. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void describe(const char *what, pid_t child, int options) {
  int status = 0;
  pid_t got = waitpid(child, &status, options);
  if (got <= 0)
    printf("%s: nothing (%d)\n", what, got);
  else if (WIFSTOPPED(status))
    printf("%s: stopped by %s\n", what, WSTOPSIG(status) == SIGSTOP ? "SIGSTOP" : "SIGTSTP");
  else if (WIFCONTINUED(status))
    printf("%s: continued\n", what);
  else if (WIFEXITED(status))
    printf("%s: exited %d\n", what, WEXITSTATUS(status));
  else
    printf("%s: other %#x\n", what, status);
  fflush(stdout);
}

int main(void) {
  int sigs[2] = {SIGSTOP, SIGTSTP};
  for (int round = 0; round < 2; round++) {
    int go[2];
    if (pipe(go) != 0) return 1;
    pid_t child = fork();
    if (child == 0) {
      /* A process group of its own, whose parent is in another group of the session: not
       * orphaned, so SIGTSTP stops it wherever the test runs (the kernel discards SIGTSTP,
       * SIGTTIN and SIGTTOU in an orphaned group, e.g. under a detached shell). */
      setpgid(0, 0);
      kill(getpid(), sigs[round]);
      /* Resumed: it waits until its parent saw it continue. */
      char c;
      if (read(go[0], &c, 1) != 1) _exit(1);
      printf("child %d resumed\n", round);
      fflush(stdout);
      _exit(7 + round);
    }
    describe("wait", child, WUNTRACED);
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    /* Still stopped: no end to report, and the kernel shows it stopped (T; t, a tracing
     * stop, for a traced child). */
    describe("poll", child, WNOHANG);
    char path[64], stat[256] = {0};
    snprintf(path, sizeof path, "/proc/%d/stat", child);
    FILE *f = fopen(path, "r");
    if (!f || !fgets(stat, sizeof stat, f)) return 1;
    fclose(f);
    char *state = strrchr(stat, ')');
    char st = state ? state[2] : '?';
    printf("state %s\n", st == 'T' || st == 't' ? "stopped" : "running or asleep");
    kill(child, SIGCONT);
    describe("wait", child, WCONTINUED);
    if (write(go[1], "g", 1) != 1) return 1;
    describe("wait", child, 0);
    close(go[0]);
    close(go[1]);
  }
  return 0;
}
