/* Record/replay test: 16 bytes of /dev/urandom, printed as hex and as two integers. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsigned char buf[16];
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)sizeof buf) {
        perror("/dev/urandom");
        return 1;
    }
    close(fd);
    unsigned long long word = 0;
    for (int i = 0; i < 8; i++)
        word |= (unsigned long long)buf[i] << (8 * i);
    unsigned int tail = buf[12] | buf[13] << 8 | buf[14] << 16 | (unsigned int)buf[15] << 24;
    printf("hex=");
    for (int i = 0; i < 16; i++)
        printf("%02x", buf[i]);
    printf("\n");
    printf("word=%llu\n", word); /* BREAK-HERE */
    printf("tail=%u\n", tail);
    return 0;
}
