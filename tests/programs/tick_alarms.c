/* Instruction-counter test: timer signals land in a loop whose only state is in memory (a
 * global, read and written at every iteration: at most pcs the registers are the same from one
 * iteration to the next). The handler notes where the loop was at each signal; those values
 * differ from run to run and a replay must land each signal on the same iteration. With an
 * argument, the timer is ITIMER_PROF (CPU time) instead of ITIMER_REAL. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#define SIGNALS 12

static volatile unsigned long progress;
static volatile int seen;
static unsigned long at[SIGNALS];

static void on_timer(int sig)
{
    (void)sig;
    if (seen < SIGNALS)
        at[seen] = progress;
    seen++;
}

/* The noted values, printed as gdb prints the array. */
__attribute__((noinline)) static void report(void)
{
    printf("at = {");
    for (int i = 0; i < SIGNALS; i++)
        printf(i ? ", %lu" : "%lu", at[i]);
    printf("}\n");
}

int main(int argc, char **argv)
{
    int which = argc > 1 ? ITIMER_PROF : ITIMER_REAL;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_timer;
    sigaction(which == ITIMER_PROF ? SIGPROF : SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 2000}, {0, 2000}};
    setitimer(which, &it, NULL);
    while (seen < SIGNALS)
        progress = progress * 3 + 1;
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(which, &off, NULL);
    report();
    return 0;
}
