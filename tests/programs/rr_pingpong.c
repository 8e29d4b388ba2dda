/* Record/replay test: two threads that hand the turn to each other with sched_yield and
 * check that the other one ran in between; the shared counter is seeded by the time-stamp
 * counter. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <x86intrin.h>

#define ROUNDS 200

static volatile int last = -1;
static volatile int ready[2];
static volatile unsigned long value;
static int out_of_turn[2];

static void *player(void *arg)
{
    int me = (int)(long)arg;
    ready[me] = 1;
    while (!ready[1 - me])
        sched_yield();
    for (int i = 0; i < ROUNDS; i++) {
        if (last == me)
            out_of_turn[me]++;
        last = me;
        value = value * 31 + (unsigned long)me;
        sched_yield();
    }
    return NULL;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    value = __rdtsc() % 1000003;
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, player, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    unsigned long result = value;
    int misses = out_of_turn[0] + out_of_turn[1];
    printf("result=%lu\n", result); /* BREAK-HERE */
    printf("misses=%d\n", misses);
    return 0;
}
