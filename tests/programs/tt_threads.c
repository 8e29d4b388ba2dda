/* Time travel with threads: two workers take turns (a mutex) updating one global through a
   function; the order of updates is decided by the scheduler at record time. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
long shared;

void bump(long id) {
    shared = shared * 3 + id; /* BUMP-HERE */
}

static void *worker(void *arg) {
    long id = (long)arg;
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&lock);
        bump(id);
        pthread_mutex_unlock(&lock);
        usleep(1000);
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
