/* A private mapping of two pages of an empty file: the first page comes into being when
 * the file grows under the mapping, the second still faults (SIGBUS) past the file's end. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf back;

static void on_sigbus(int sig)
{
    (void)sig;
    siglongjmp(back, 1);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    long page = sysconf(_SC_PAGESIZE);
    FILE *f = tmpfile();
    if (f == NULL)
        return 1;
    int fd = fileno(f);
    char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        return 1;
    signal(SIGBUS, on_sigbus);
    if (ftruncate(fd, page) != 0)
        return 1;
    p[0] = 'x';
    printf("first page: %c\n", p[0]);
    if (sigsetjmp(back, 1) == 0) {
        p[page] = 'y';
        printf("second page written\n");
    } else {
        printf("second page: SIGBUS past the end\n");
    }
    return 0;
}
