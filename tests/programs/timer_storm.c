/* A fast interval timer whose SIGALRM lands again and again while the program is in a
 * syscall that a debugger's in-process agent may answer (gettid in a tight loop): each signal
 * must reach the handler, none may turn into another signal. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#define WANTED 5000

static volatile sig_atomic_t caught;

static void on_alarm(int sig) {
  (void)sig;
  caught++;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {{0, 200}, {0, 200}};
  setitimer(ITIMER_REAL, &it, NULL);
  long calls = 0;
  while (caught < WANTED) {
    syscall(SYS_gettid);
    calls++;
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("caught %d SIGALRM, made %s gettid calls\n", WANTED, calls > WANTED ? "more" : "fewer");
  return 0;
}
