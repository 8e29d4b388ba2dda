/* Record/replay test of the in-process agent in a statically linked program (built with
 * -static: no dynamic loader, no LD_PRELOAD could reach it): its reads are buffered. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int fd = open("/dev/urandom", O_RDONLY);
    unsigned long h = 14695981039346656037UL;
    for (int i = 0; i < 100; i++) {
        unsigned char b[8];
        if (read(fd, b, sizeof b) != sizeof b)
            return 1;
        for (int j = 0; j < 8; j++)
            h = (h ^ b[j]) * 1099511628211UL;
    }
    close(fd);
    unsigned long value = h % 1000000007;
    printf("value=%lu\n", value); /* BREAK-HERE */
    return 0;
}
