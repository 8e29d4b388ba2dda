/* Two shared mappings of one file alias: what is written through one is read through the
 * other, with no syscall in between. A file grown under a mapping (pwrite past its end)
 * reads through the mapping, and so do bytes written into the file by write(). Each round
 * reads what it wrote: going back must find the bytes as they were then. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    FILE *f = tmpfile();
    if (f == NULL)
        return 1;
    int fd = fileno(f);
    if (ftruncate(fd, 4096) != 0)
        return 1;
    int *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int *r = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    if (w == MAP_FAILED || r == MAP_FAILED || w == r)
        return 1;
    for (int i = 0; i < 5; i++) {
        int x = r[0];
        w[0] = x + 10;
        printf("round %d read %d\n", i, x); /* each round */
    }
    w[1] = 77; /* later than every round */
    /* Two pages of a one-page file: the second exists once the file grows. */
    char *big = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
    if (big == MAP_FAILED)
        return 1;
    if (pwrite(fd, "grown under the mapping", 24, 4096) != 24)
        return 1;
    printf("second page: %s\n", big + 4096);
    int v = 1234;
    if (pwrite(fd, &v, sizeof v, 8) != sizeof v)
        return 1;
    printf("written by pwrite: %d %d, then %d\n", r[2], ((int *)big)[2], r[1]); /* last line */
    return 0;
}
