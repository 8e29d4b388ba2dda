/* Reverse-stepi benchmark: a loop of a few seconds without a syscall (its state only in
   registers and memory), then `done`. Reverse-stepping from `done` goes back into the loop:
   each step back costs a replay from the nearest checkpoint, which must lie inside the loop
   for a step to be cheap. */
#include <stdio.h>
#include <stdlib.h>

volatile unsigned long sink;

void done(unsigned long v) { sink = v; }

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 2000000000L;
    unsigned long a = 1;
    for (long j = 0; j < n; j++)
        a = a * 6364136223846793005UL + (a >> 7) + j;
    done(a);
    printf("%lu\n", a);
    return 0;
}
