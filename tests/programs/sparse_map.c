/* A shared mapping of a sparse 64 GiB file: the recorder copies it sparse, replay maps it
 * without reserving memory for it. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    char path[] = "/tmp/hindsight-sparse-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    unlink(path);
    off_t size = (off_t)64 << 30;
    if (pwrite(fd, "x", 1, size) != 1)
        return 1;
    char *p = mmap(NULL, size + 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    p[size / 2] = 7;
    printf("last byte %c, middle %d, start %d\n", p[size], p[size / 2], p[0]);
    munmap(p, size + 1);
    return 0;
}
