/* A shared mapping moved by mremap, then written by a forked child (at the old address, in
 * the child): the parent reads it at the new one. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *target = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int go[2];
    if (p == MAP_FAILED || target == MAP_FAILED || pipe(go))
        return 1;
    strcpy(p, "before the move");
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        if (read(go[0], &c, 1) != 1)
            _exit(1);
        strcpy(p, "written by the child after the move");
        _exit(0);
    }
    char *q = mremap(p, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, target);
    if (q == MAP_FAILED)
        return 1;
    printf("moved: %s\n", q);
    if (write(go[1], "x", 1) != 1)
        return 1;
    waitpid(pid, NULL, 0);
    printf("now: %s\n", q);
    return 0;
}
