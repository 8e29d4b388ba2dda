/* Record/replay test: two producers and a consumer through a bounded queue (a mutex and two
 * condition variables); the values come from the time-stamp counter and /dev/urandom, and the
 * order in which the producers' items arrive differs from run to run. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <x86intrin.h>

#define ITEMS 25
#define SLOTS 4

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static unsigned long queue[SLOTS];
static int from[SLOTS];
static int head, count;

static void *producer(void *arg)
{
    int id = (int)(long)arg;
    int fd = open("/dev/urandom", O_RDONLY);
    for (int i = 0; i < ITEMS; i++) {
        unsigned short r = 0;
        if (id == 1 && read(fd, &r, sizeof r) != sizeof r)
            r = 0;
        unsigned long v = id == 0 ? __rdtsc() % 100000 : r;
        pthread_mutex_lock(&lock);
        while (count == SLOTS)
            pthread_cond_wait(&not_full, &lock);
        queue[(head + count) % SLOTS] = v;
        from[(head + count) % SLOTS] = id;
        count++;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&lock);
    }
    close(fd);
    return NULL;
}

static unsigned long total;
static unsigned long order_hash;

static void *consumer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2 * ITEMS; i++) {
        pthread_mutex_lock(&lock);
        while (count == 0)
            pthread_cond_wait(&not_empty, &lock);
        unsigned long v = queue[head];
        int who = from[head];
        head = (head + 1) % SLOTS;
        count--;
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&lock);
        total += v;
        order_hash = order_hash * 3 + who;
        printf("item %d from %d: %lu\n", i, who, v);
    }
    return NULL;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_t p0, p1, c;
    pthread_create(&c, NULL, consumer, NULL);
    pthread_create(&p0, NULL, producer, (void *)0L);
    pthread_create(&p1, NULL, producer, (void *)1L);
    pthread_join(p0, NULL);
    pthread_join(p1, NULL);
    pthread_join(c, NULL);
    unsigned long sum = total;
    unsigned long order = order_hash;
    printf("sum=%lu\n", sum); /* BREAK-HERE */
    printf("order=%lu\n", order);
    return 0;
}
