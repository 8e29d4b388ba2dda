/* Instruction-counter test: THREADS threads add to shared counters without a lock and without a
 * syscall between two updates. An update is a load, an add and a store: a thread preempted
 * between them loses the others' updates, so what the counters end at depends on the exact
 * instructions where the threads were preempted, and differs from run to run. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4

static volatile unsigned long shared[4];
static unsigned long iterations = 1000000;

static void *racer(void *arg)
{
    unsigned long x = (unsigned long)arg + 1;
    for (unsigned long i = 0; i < iterations; i++) {
        unsigned long v = shared[i & 3]; /* LOAD */
        for (int k = 0; k < 4; k++)
            x = x * 6364136223846793005UL + 1442695040888963407UL;
        shared[i & 3] = v + (x >> 56);
    }
    return NULL;
}

/* The final values, printed as gdb prints the array. */
__attribute__((noinline)) static void report(void)
{
    printf("shared = {%lu, %lu, %lu, %lu}\n", shared[0], shared[1], shared[2], shared[3]);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        iterations = strtoul(argv[1], NULL, 10);
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, racer, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    report();
    return 0;
}
