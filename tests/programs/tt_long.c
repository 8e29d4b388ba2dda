/* Time travel over a longer run (about half a second): CPU-bound work with a syscall every
   few iterations, so that replay takes automatic checkpoints along the way; `mark` is called
   at a few iterations spread over the run. */
#include <stdio.h>
#include <unistd.h>

volatile long sink;

long step(long i) { return (i * 2654435761u) ^ (i >> 3); }

void mark(long i, long acc) { sink = i + acc; }

int main(void) {
    long acc = 0;
    for (long i = 0; i < 600; i++) {
        for (long j = 0; j < 100000; j++)
            acc += step(j + i);
        if (i % 4 == 0)
            getppid();
        if (i % 100 == 7)
            mark(i, acc);
    }
    printf("acc=%ld\n", acc);
    return 0;
}
