/* Record/replay test: 4 threads of CPU work (long enough to be preempted, no syscall in
 * between) that hand a shared value over under a mutex; the order of the handoffs, hence the
 * final value, differs from run to run, and the work is seeded by the time-stamp counter. */
#include <pthread.h>
#include <stdio.h>
#include <x86intrin.h>

#define THREADS 4
#define ROUNDS 6

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long shared_value;
static unsigned long order_hash;

static void *worker(void *arg)
{
    long id = (long)arg;
    unsigned long x = __rdtsc() | 1;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < 1500000; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        pthread_mutex_lock(&lock);
        shared_value = shared_value * 31 + (x & 0xffff);
        order_hash = order_hash * 5 + id;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    unsigned long value = shared_value;
    unsigned long order = order_hash;
    printf("value=%lu\n", value); /* BREAK-HERE */
    printf("order=%lu\n", order);
    return 0;
}
