/* The README's demo: two threads add into a shared total. */
#include <pthread.h>
#include <stdio.h>

struct point { int x, y; };

long total;
pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int add(struct point *p) {
    return p->x + p->y;
}

void *worker(void *arg) {
    struct point pt = { (int)(long)arg, 10 };
    int v = add(&pt);
    pthread_mutex_lock(&lock);
    total += v;
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(void) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, (void *)(i + 1));
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    printf("total = %ld\n", total);
    return 0;
}
