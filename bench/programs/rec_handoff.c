/* Hand-offs: N threads (argv[2], default 16) pass a turn around a ring, R times each
 * (argv[1], default 500), under one mutex and one condition variable per thread: each
 * waits for its turn, bumps a shared value and signals the next thread. Almost no work
 * between hand-offs: the cost is the futex waits and wakes and the thread switches. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed[64];
static int turn, nthreads;
static long rounds;
static unsigned long value;

static void *worker(void *arg)
{
    int me = (int)(long)arg;
    for (long r = 0; r < rounds; r++) {
        pthread_mutex_lock(&lock);
        while (turn != me)
            pthread_cond_wait(&turn_changed[me], &lock);
        value = value * 31 + (unsigned long)me;
        turn = (me + 1) % nthreads;
        pthread_cond_signal(&turn_changed[turn]);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atol(argv[1]) : 500;
    nthreads = argc > 2 ? atoi(argv[2]) : 16;
    pthread_t t[64];
    if (nthreads < 1 || nthreads > 64)
        return 2;
    for (int i = 0; i < nthreads; i++)
        pthread_cond_init(&turn_changed[i], NULL);
    for (long i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    printf("%lu\n", value);
    return 0;
}
