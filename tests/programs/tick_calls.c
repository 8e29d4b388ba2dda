/* Periodic tick events and eras: a loop without syscalls that calls step() at every turn.
 * Compiled at -O0, each turn counts two ticks (step's entry and the loop's backward branch),
 * so tick counts inside the loop map to turns: `iter` is the turn, `acc` changes at each. */
#include <stdio.h>
#include <stdlib.h>

volatile long iter;
volatile long acc;

__attribute__((noinline)) void step(long v)
{
    acc += v; /* STEP-HERE */
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    for (long i = 0; i < n; i++) {
        iter = i;
        step(i);
    }
    printf("acc = %ld\n", acc);
    return 0;
}
