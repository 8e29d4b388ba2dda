/* Record/replay test: many events and much recorded data (200 reads of 4 KiB from
 * /dev/urandom, a line printed after each), so that a trace spans several frames. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    static unsigned char buf[4096];
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd < 0)
        return 1;
    unsigned long total = 0;
    for (int i = 0; i < 200; i++) {
        if (read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
            return 1;
        unsigned long sum = 0;
        for (size_t k = 0; k < sizeof buf; k++)
            sum = sum * 33 + buf[k];
        total ^= sum;
        printf("block %d: %lu\n", i, sum);
    }
    close(fd);
    printf("total=%lu\n", total); /* BREAK-HERE */
    return 0;
}
