/* Time travel over a longer multi-threaded run (about half a second): two workers compute,
   then take turns (a mutex) updating one global through a function; main waits for them.
   Replay takes checkpoints of the whole process, threads included. Each thread makes a
   syscall at least every few hundred microseconds of computing. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
long shared;
volatile long sink;

void bump(long id, long round) {
    shared = shared * 3 + id + round; /* BUMP-HERE */
}

static long work(long n, long seed) {
    long a = seed;
    for (long j = 0; j < n; j++) {
        a += (j * 2654435761u) ^ (a >> 3);
        /* A syscall now and then: the recorder never has to preempt a computing thread
           (positions without syscalls are a known weak spot of replay, not the subject). */
        if (j % 250000 == 0)
            getppid();
    }
    return a;
}

static void *worker(void *arg) {
    long id = (long)arg;
    for (long round = 0; round < 60; round++) {
        sink = work(4000000, round);
        pthread_mutex_lock(&lock);
        bump(id, round);
        pthread_mutex_unlock(&lock);
        getppid();
    }
    return NULL;
}

int main(void) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)(i + 1));
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("shared=%ld\n", shared); /* END-HERE */
    return 0;
}
