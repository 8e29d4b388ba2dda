/* Record/replay test: prints a random value, then writes through a null pointer. */
#include <stdio.h>
#include <sys/random.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsigned int value = 0;
    if (getrandom(&value, sizeof value, 0) != sizeof value)
        return 1;
    volatile unsigned int *nowhere = NULL;
    printf("value=%u\n", value); /* BREAK-HERE */
    fprintf(stderr, "about to crash\n");
    *nowhere = value;
    printf("not reached\n");
    return 0;
}
