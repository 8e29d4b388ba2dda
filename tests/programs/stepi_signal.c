/* A signal that ends a blocking syscall: SIGALRM interrupts pause(), and its handler runs at
 * the syscall's end. For stepping by instruction over that `syscall`, into the handler, and
 * back, asking where the replay stands at each stop. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <unistd.h>

static volatile int hits;

static void on_alarm(int sig)
{
    hits += sig;
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, 0);
    struct itimerval it = {{0, 0}, {0, 20000}};
    setitimer(ITIMER_REAL, &it, 0);
    pause();
    printf("hits=%d\n", hits);
    return 0;
}
