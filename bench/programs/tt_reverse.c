/* Reverse-execution benchmark: CPU-bound work in ITERS iterations of PER steps each, with one
   syscall per iteration (getppid: replay time moves on, checkpoints can be taken). `early` is
   called near the start, `late` near the end, `tick` in each of the last 20 iterations (the
   hot loop that is stepped back through). Prints the native time from `early` to `late`. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

volatile long sink;

void early(long i) { sink = i; }
void late(long i) { sink = i; }
void tick(long i) { sink = i; }

static long work(long n, long seed) {
    long a = seed;
    for (long j = 0; j < n; j++)
        a += (j * 2654435761u) ^ (a >> 3);
    return a;
}

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : 3000;
    long per = argc > 2 ? atol(argv[2]) : 300000;
    /* A third argument: no clock reads (gdb's record full cannot record the vDSO's). */
    int timed = argc <= 3;
    long acc = 0, t_early = 0, t_late = 0;
    for (long i = 0; i < iters; i++) {
        acc += work(per, i);
        getppid();
        if (i == 2) {
            early(i);
            if (timed)
                t_early = now_ns();
        }
        if (i >= iters - 20)
            tick(i);
        if (i == iters - 2) {
            if (timed)
                t_late = now_ns();
            late(i);
        }
    }
    fprintf(stderr, "stretch_ns=%ld\n", t_late - t_early);
    printf("%ld\n", acc);
    return 0;
}
