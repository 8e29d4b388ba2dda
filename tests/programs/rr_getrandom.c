/* Record/replay test: getrandom(2), twice (the second time into a heap buffer). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsigned int small[4];
    if (getrandom(small, sizeof small, 0) != (ssize_t)sizeof small) {
        perror("getrandom");
        return 1;
    }
    unsigned char *heap = malloc(64);
    if (getrandom(heap, 64, GRND_NONBLOCK) != 64) {
        perror("getrandom");
        return 1;
    }
    unsigned long sum = 0;
    for (int i = 0; i < 64; i++)
        sum = sum * 31 + heap[i];
    unsigned int first = small[0];
    unsigned int last = small[3];
    free(heap);
    printf("first=%u\n", first); /* BREAK-HERE */
    printf("last=%u\n", last);
    printf("sum=%lu\n", sum);
    return 0;
}
