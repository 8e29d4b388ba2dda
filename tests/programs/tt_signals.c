/* Time travel and signals: the program sends itself SIGUSR1 three times (its handler counts
   them), then crashes on a null pointer. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

volatile int handled;

static void on_usr1(int sig) {
    (void)sig;
    handled++;
}

int main(void) {
    signal(SIGUSR1, on_usr1);
    for (int i = 0; i < 3; i++) {
        kill(getpid(), SIGUSR1);
        getppid();
    }
    printf("handled=%d\n", handled);
    fflush(stdout);
    int *volatile p = NULL;
    return *p; /* CRASH-HERE */
}
