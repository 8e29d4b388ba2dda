/* Record/replay benchmark: SIGALRM every millisecond (setitimer) interrupts a loop that makes
 * no syscall, N times; each signal is an asynchronous position that replay must find again. */
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
    int want = argc > 1 ? atoi(argv[1]) : 200;
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
    volatile unsigned long counter = 0;
    while (ticks < want)
        counter++;
    printf("%lu loops, %d signals\n", counter, (int)ticks);
    return 0;
}
