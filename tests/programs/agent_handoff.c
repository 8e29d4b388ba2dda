/* Record/replay test of the in-process agent with many threads on one mutex and condition
 * variables: THREADS threads pass a turn around a ring (each waits on its own condition
 * variable: a futex wait that blocks, every turn), and between turns take items from a
 * shared queue, whoever gets the mutex first. The order in which items are taken, and the
 * time, differ from run to run; replay must give back the recorded ones. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define THREADS 8
#define ROUNDS 60
#define ITEMS 400

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed[THREADS];
static pthread_cond_t queue_changed = PTHREAD_COND_INITIALIZER;
static int turn;
static int next_item;
static unsigned long digest = 1469598103934665603UL;
static long took[THREADS];

static void mix(unsigned long v)
{
    digest = (digest ^ v) * 1099511628211UL;
}

static void *worker(void *arg)
{
    int me = (int)(long)arg;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_mutex_lock(&lock);
        while (turn != me)
            pthread_cond_wait(&turn_changed[me], &lock);
        mix((unsigned long)me);
        turn = (me + 1) % THREADS;
        pthread_cond_signal(&turn_changed[turn]);
        pthread_mutex_unlock(&lock);
        /* Whoever comes first takes an item (or waits for the queue to move). */
        pthread_mutex_lock(&lock);
        if (next_item < ITEMS) {
            mix(((unsigned long)next_item << 8) | (unsigned long)me);
            next_item++;
            took[me]++;
            pthread_cond_broadcast(&queue_changed);
        }
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long start = ts.tv_nsec;
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_cond_init(&turn_changed[i], NULL);
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    long most = 0;
    for (int i = 0; i < THREADS; i++)
        if (took[i] > most)
            most = took[i];
    printf("start=%ld\n", start); /* BREAK-HERE */
    printf("digest=%lu\n", digest);
    printf("most=%ld\n", most);
    return 0;
}
