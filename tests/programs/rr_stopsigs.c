/* Record/replay test: the job-control signals, caught by a handler (so none stops the
 * program), then SIGCONT. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile int caught;

static void on_signal(int sig)
{
    caught += sig;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int sigs[] = {SIGTTIN, SIGTTOU, SIGTSTP, SIGCONT};
    for (int i = 0; i < 4; i++) {
        signal(sigs[i], on_signal);
        kill(getpid(), sigs[i]);
    }
    printf("caught=%d\n", caught);
    return 0;
}
