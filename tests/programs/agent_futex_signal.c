/* Record/replay test of the in-process agent: signals that arrive while a thread is blocked
 * in a buffered futex wait (a condition variable). SIGUSR1 has a handler with SA_RESTART
 * (the wait goes on), SIGUSR2 one without (the wait returns, the condition variable's loop
 * waits again); each handler reads the time. Then the main thread lets the waiter go. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define ROUNDS 6

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int go, waiting;
static volatile long usr1, usr2;
static volatile long handled;

static void on_signal(int sig)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (sig == SIGUSR2)
        usr2 ^= ts.tv_nsec;
    else
        usr1 ^= ts.tv_nsec;
    handled++;
}

static void *waiter(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_mutex_lock(&lock);
        waiting = 1;
        while (go <= r)
            pthread_cond_wait(&cond, &lock);
        waiting = 0;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void pause_ms(long ms)
{
    struct timespec d = {0, ms * 1000000L};
    nanosleep(&d, NULL);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_flags = 0;
    sigaction(SIGUSR2, &sa, NULL);
    pthread_t t;
    pthread_create(&t, NULL, waiter, NULL);
    for (int r = 0; r < ROUNDS; r++) {
        /* The waiter is blocked in its wait by then. */
        for (int k = 0; k < 50; k++) {
            pthread_mutex_lock(&lock);
            int w = waiting;
            pthread_mutex_unlock(&lock);
            if (w)
                break;
            pause_ms(1);
        }
        pause_ms(3);
        pthread_kill(t, r % 2 ? SIGUSR2 : SIGUSR1);
        pause_ms(3);
        pthread_mutex_lock(&lock);
        go = r + 1;
        pthread_cond_signal(&cond);
        pthread_mutex_unlock(&lock);
    }
    pthread_join(t, NULL);
    printf("usr1=%ld\n", usr1); /* BREAK-HERE */
    printf("usr2=%ld\n", usr2);
    printf("handled=%ld\n", handled);
    return 0;
}
