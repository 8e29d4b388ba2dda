/* N threads (argv[1], default 4) each call f() CALLS times (argv[2], default 5000) at once,
 * then the program prints a checksum that depends on every call's result. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 64

static int nthreads = 4;
static int calls = 5000;
static pthread_barrier_t start;
static unsigned long sums[MAX_THREADS];

__attribute__((noinline)) unsigned long f(unsigned long x)
{
    return (x * 2654435761u) % 1000003u;
}

static void *worker(void *arg)
{
    long id = (long)arg;
    unsigned long s = 0;
    pthread_barrier_wait(&start);
    for (int i = 0; i < calls; i++)
        s += f((unsigned long)(id * calls + i));
    sums[id] = s;
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t[MAX_THREADS];
    fprintf(stderr, "pid %d\n", (int)getpid());
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        calls = atoi(argv[2]);
    if (nthreads < 1 || nthreads > MAX_THREADS)
        return 2;
    pthread_barrier_init(&start, NULL, (unsigned)nthreads);
    for (long i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    unsigned long total = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(t[i], NULL);
        total += sums[i];
    }
    printf("threads %d calls %d checksum %lu\n", nthreads, calls, total);
    return 0;
}
