/* The program executes its own int3 and catches the SIGTRAP with its own handler. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t traps;

static void on_trap(int sig)
{
    static const char msg[] = "handler caught signal 5\n";
    traps++;
    if (sig == SIGTRAP && write(1, msg, sizeof msg - 1) < 0)
        traps = 100;
}

int main(void)
{
    struct sigaction sa;
    fprintf(stderr, "pid %d\n", (int)getpid());
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_trap;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTRAP, &sa, NULL);
    printf("before int3\n");
    __asm__ volatile("int3");
    printf("after int3, traps = %d\n", (int)traps);
    return 0;
}
