/* Instruction-counter test: one loop without calls or syscalls, compiled at -O0, so that each
 * iteration counts exactly one tick (its backward branch). `break tick N` then stops N ticks
 * into the thread's life, and two such stops K ticks apart are K iterations apart. */
#include <stdio.h>
#include <stdlib.h>

volatile unsigned long sum;

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 3000000;
    for (long i = 0; i < n; i++)
        sum += (unsigned long)i * i;
    printf("sum = %lu\n", sum);
    return 0;
}
