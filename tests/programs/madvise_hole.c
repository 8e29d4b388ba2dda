/* madvise(MADV_DONTNEED) over a range with a hole: it fails with ENOMEM, yet the page mapped
 * before the hole was dropped (reads zeros again); an mprotect over the hole likewise changes
 * the page before it. Over a locked page it fails with EINVAL after dropping the page before
 * it, and the locked one keeps its bytes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    long page = sysconf(_SC_PAGESIZE);
    char *area = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED)
        return 1;
    munmap(area + page, page); /* the hole */
    memset(area, 'x', page);
    int r = madvise(area, 3 * page, MADV_DONTNEED);
    printf("madvise: %d (%s), first byte now %d\n", r, r ? strerror(errno) : "", area[0]);
    memset(area, 'y', page);
    r = mprotect(area, 3 * page, PROT_READ);
    printf("mprotect: %d (%s)\n", r, r ? strerror(errno) : "");
    /* Read-only now: writing would fault. Ask the kernel instead. */
    r = mprotect(area, page, PROT_READ | PROT_WRITE);
    area[1] = 'z';
    printf("bytes: %c%c\n", area[0], area[1]);
    char *two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    two[0] = 'a';
    two[page] = 'b';
    if (mlock(two + page, page) != 0)
        return 1;
    r = madvise(two, 2 * page, MADV_DONTNEED);
    printf("madvise over a locked page: %d (%s), bytes %d %c\n", r, r ? strerror(errno) : "",
           two[0], two[page]);
    return 0;
}
