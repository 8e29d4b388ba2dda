/* Calls hit() N times (argv[1]); the benchmark breaks on hit. */
#include <stdio.h>
#include <stdlib.h>

volatile long sink;

__attribute__((noinline)) void hit(long i) { sink += i; }

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 10000;
    for (long i = 0; i < n; i++) hit(i);
    printf("%ld\n", sink);
    return 0;
}
