/* Threads: 4 threads (argv[2]) each do R rounds (argv[1], default 100) of CPU work (about
 * 2.5 ms natively) and then hand a shared value over under a mutex. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long shared_value;
static long rounds;

static void *worker(void *arg)
{
    unsigned long x = (unsigned long)arg * 2654435761UL + 1;
    for (long r = 0; r < rounds; r++) {
        for (int i = 0; i < 1000000; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        pthread_mutex_lock(&lock);
        shared_value = shared_value * 31 + (x & 0xffff);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atol(argv[1]) : 100;
    int nthreads = argc > 2 ? atoi(argv[2]) : 4;
    pthread_t t[64];
    if (nthreads < 1 || nthreads > 64)
        return 2;
    for (long i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, (void *)(i + 1));
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    printf("%lu\n", shared_value);
    return 0;
}
