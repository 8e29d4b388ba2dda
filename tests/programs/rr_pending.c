/* Record/replay test: two signals pending at once for a thread blocked in read(); the second
 * is delivered as the first one's handler starts (its first call into libc goes through the
 * lazy binder). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <x86intrin.h>

static int fds[2];
static pthread_t main_thread;

static void handler(int sig, siginfo_t *si, void *ctx)
{
    (void)si;
    (void)ctx;
    printf("handled %s\n", sig == SIGUSR1 ? "SIGUSR1" : "SIGUSR2");
}

static void *sender(void *arg)
{
    (void)arg;
    usleep(20000);
    pthread_kill(main_thread, SIGUSR1);
    pthread_kill(main_thread, SIGUSR2);
    write(fds[1], "K", 1);
    return NULL;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    main_thread = pthread_self();
    unsigned long nonce = __rdtsc() % 1000003;
    struct sigaction sa = {0};
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    pipe(fds);
    pthread_t t;
    pthread_create(&t, NULL, sender, NULL);
    char c = 0;
    read(fds[0], &c, 1);
    pthread_join(t, NULL);
    printf("nonce=%lu\n", nonce); /* BREAK-HERE */
    printf("read=%c\n", c);
    return 0;
}
