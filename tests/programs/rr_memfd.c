/* Record/replay test: a memfd filled with random bytes by write(), then mapped twice in the
 * same process, MAP_SHARED and MAP_PRIVATE (memory shared with no other process). */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsigned long rnd[512];
    if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd)
        return 1;
    int fd = memfd_create("rr-memfd", 0);
    if (fd < 0 || write(fd, rnd, sizeof rnd) != sizeof rnd)
        return 1;
    const unsigned long *shared = mmap(NULL, sizeof rnd, PROT_READ, MAP_SHARED, fd, 0);
    unsigned long *private = mmap(NULL, sizeof rnd, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (shared == MAP_FAILED || private == MAP_FAILED)
        return 1;
    private[7] ^= 1;
    unsigned long sum = 0;
    for (int i = 0; i < 512; i++)
        sum += shared[i] ^ private[i];
    unsigned long shared_word = shared[100];
    unsigned long private_word = private[200];
    printf("shared_word=%lu\n", shared_word); /* BREAK-HERE */
    printf("private_word=%lu\n", private_word);
    printf("sum=%lu\n", sum);
    printf("checks=%d,%d\n", shared_word == rnd[100], sum == 1);
    return 0;
}
