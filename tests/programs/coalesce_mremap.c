/* Two mappings of one open file that the kernel merged into one area (the second mapped over
 * the start of the first): an mremap of the whole area works on it only as one area. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    (void)argc;
    setvbuf(stdout, NULL, _IOLBF, 0);
    long page = sysconf(_SC_PAGESIZE);
    int fd = open(argv[0], O_RDONLY);
    off_t end = lseek(fd, 0, SEEK_END);
    size_t len = (end + page - 1) / page * page + page;
    char *a = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (a == MAP_FAILED || mmap(a, page, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) != a)
        return 1;
    char *b = mremap(a, len, len + page, MREMAP_MAYMOVE);
    printf("mremap %s, first bytes %c%c%c\n", b == MAP_FAILED ? "failed" : "worked", b[1], b[2],
           b[3]);
    return 0;
}
