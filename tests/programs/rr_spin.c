/* Record/replay test: a thread spins on an atomic flag without any syscall while the main
 * thread does some work (seeded by the time-stamp counter) and then sets the flag. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <x86intrin.h>

static atomic_int flag;
static unsigned long spun;

static void *spinner(void *arg)
{
    (void)arg;
    unsigned long spins = 0;
    while (!atomic_load_explicit(&flag, memory_order_acquire))
        spins++;
    spun = spins;
    return NULL;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_t t;
    pthread_create(&t, NULL, spinner, NULL);
    unsigned long x = __rdtsc() | 1;
    for (int i = 0; i < 3000000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    atomic_store_explicit(&flag, 1, memory_order_release);
    pthread_join(t, NULL);
    unsigned long work = x;
    unsigned long spins = spun;
    printf("work=%lu\n", work); /* BREAK-HERE */
    printf("spins=%lu\n", spins);
    return 0;
}
