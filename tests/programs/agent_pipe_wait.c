/* Record/replay test of the in-process agent: a thread's read of a pipe blocks until another
 * thread writes to it, round after round (each read is a buffered call that blocks: the
 * recorder must let the writer run). What goes through the pipe is the time, so two runs
 * differ. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 20

static int to_reader[2], to_writer[2];

static void *writer(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        char go;
        if (read(to_writer[0], &go, 1) != 1)
            return NULL;
        usleep(2000); /* the reader is blocked in its read by now */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        long v = ts.tv_nsec;
        if (write(to_reader[1], &v, sizeof v) != sizeof v)
            return NULL;
    }
    return NULL;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (pipe(to_reader) || pipe(to_writer))
        return 1;
    pthread_t t;
    pthread_create(&t, NULL, writer, NULL);
    long sum = 0, got = 0;
    for (int i = 0; i < ROUNDS; i++) {
        if (write(to_writer[1], "g", 1) != 1)
            return 2;
        long v;
        if (read(to_reader[0], &v, sizeof v) != sizeof v)
            return 3;
        sum = (sum * 31 + v) % 1000000007;
        got++;
    }
    pthread_join(t, NULL);
    printf("sum=%ld\n", sum); /* BREAK-HERE */
    printf("got=%ld\n", got);
    return 0;
}
