/* Three workers park in read() on a pipe; once the kernel shows all of them asleep, main
 * calls all_parked() (a place to stop with four threads), then lets them go and joins them. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WORKERS 3

static int gate[2];
static volatile pid_t tids[WORKERS];
static int results[WORKERS];

static int park(int id)
{
    char c = 0;
    if (read(gate[0], &c, 1) != 1)
        return -1;
    return id * 10 + c;
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    tids[id] = (pid_t)syscall(SYS_gettid);
    results[id] = park(id);
    return NULL;
}

/* Is thread `tid` of this process asleep in the kernel? */
static int asleep(pid_t tid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] == 'S';
}

int all_parked(int n)
{
    return n;
}

int main(void)
{
    pthread_t t[WORKERS];
    fprintf(stderr, "pid %d\n", (int)getpid());
    if (pipe(gate) != 0)
        return 1;
    for (long i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < WORKERS; i++)
        while (tids[i] == 0 || !asleep(tids[i]))
            usleep(1000);
    all_parked(WORKERS);
    if (write(gate[1], "\1\1\1", WORKERS) != WORKERS)
        return 1;
    int sum = 0;
    for (int i = 0; i < WORKERS; i++) {
        pthread_join(t[i], NULL);
        sum += results[i];
    }
    printf("workers done, sum %d\n", sum);
    return 0;
}
