/* N threads call count() CALLS times each; prints a checksum of the results. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4
#define CALLS 5000

long __attribute__((noinline)) count(long x) { return x * 3 + 1; }

static long sums[THREADS];

static void *worker(void *arg) {
    long id = (long)arg, s = 0;
    for (long i = 0; i < CALLS; i++) s += count(i + id);
    sums[id] = s;
    return NULL;
}

int main(void) {
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    long total = 0;
    for (int i = 0; i < THREADS; i++) total += sums[i];
    printf("checksum %ld\n", total);
    return 0;
}
