/* Executes its own int3 under a SIGTRAP handler. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile int traps;

static void on_trap(int sig) { traps++; }

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_trap;
    sigaction(SIGTRAP, &sa, NULL);
    __asm__ volatile("int3");
    printf("handler ran %d time(s)\n", traps);
    return traps == 1 ? 0 : 1;
}
