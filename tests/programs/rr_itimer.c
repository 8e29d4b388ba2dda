/* Record/replay test: SIGALRM every millisecond (setitimer) lands in a loop that makes no
 * syscall; how far the loop got differs from run to run. The counter lives on the stack. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
    (void)sig;
    ticks++;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int want = argc > 1 ? atoi(argv[1]) : 20;
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
    volatile unsigned long counter = 0;
    while (ticks < want)
        counter++;
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    unsigned long loops = counter;
    int seen = ticks;
    printf("loops=%lu\n", loops); /* BREAK-HERE */
    printf("seen=%d\n", seen);
    return 0;
}
