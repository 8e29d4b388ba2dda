/* Record/replay test: reads the file named by argv[1], then all of stdin. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static unsigned long fnv(const unsigned char *p, size_t n, unsigned long h)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211UL;
    return h;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: rr_readfile FILE < INPUT\n");
        return 2;
    }
    static unsigned char buf[1 << 16];
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    ssize_t n;
    unsigned long file_sum = 14695981039346656037UL;
    long file_len = 0;
    char first[128] = "";
    while ((n = read(fd, buf, 1000)) > 0) {
        if (file_len == 0) {
            size_t k = 0;
            while (k < (size_t)n && k < sizeof first - 1 && buf[k] != '\n')
                k++;
            memcpy(first, buf, k);
            first[k] = 0;
        }
        file_sum = fnv(buf, n, file_sum);
        file_len += n;
    }
    close(fd);
    unsigned long stdin_sum = 14695981039346656037UL;
    long stdin_len = 0;
    while ((n = read(0, buf, 777)) > 0) {
        stdin_sum = fnv(buf, n, stdin_sum);
        stdin_len += n;
    }
    printf("first=%s\n", first);
    printf("file_sum=%lu\n", file_sum); /* BREAK-HERE */
    printf("file_len=%ld\n", file_len);
    printf("stdin_sum=%lu\n", stdin_sum);
    printf("stdin_len=%ld\n", stdin_len);
    return 0;
}
