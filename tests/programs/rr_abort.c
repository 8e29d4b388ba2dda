/* Record/replay test: prints a random value, then calls abort(). */
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsigned long value = __rdtsc() % 1000003;
    printf("value=%lu\n", value); /* BREAK-HERE */
    fprintf(stderr, "aborting with %lu\n", value);
    abort();
}
