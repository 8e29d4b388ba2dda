/* Record/replay test: a POSIX timer (timer_create, SIGEV_SIGNAL, every 2 ms) with an
 * SA_SIGINFO handler lands in a loop that makes no syscall; the counter is a global. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile sig_atomic_t ticks;
static volatile int last_value;
static volatile unsigned long counter;

static void on_timer(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)ctx;
    last_value = si->si_value.sival_int;
    ticks++;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int want = argc > 1 ? atoi(argv[1]) : 10;
    struct sigaction sa = {0};
    sa.sa_sigaction = on_timer;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGALRM, &sa, NULL);
    struct sigevent sev = {0};
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = SIGALRM;
    sev.sigev_value.sival_int = 4242;
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) {
        perror("timer_create");
        return 1;
    }
    struct itimerspec its = {{0, 2000000}, {0, 2000000}};
    timer_settime(timer, 0, &its, NULL);
    while (ticks < want)
        counter++;
    timer_delete(timer);
    unsigned long loops = counter;
    int value = last_value;
    printf("loops=%lu\n", loops); /* BREAK-HERE */
    printf("value=%d\n", value);
    return 0;
}
