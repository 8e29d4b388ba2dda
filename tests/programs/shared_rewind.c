/* Shared anonymous memory written by the process itself, then by a forked child, then
 * dropped with madvise(MADV_DONTNEED) (shared pages keep their bytes). Each round reads what
 * an earlier one wrote: going back must find the bytes as they were then. */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED)
        return 1;
    for (int i = 0; i < 5; i++) {
        int x = shared[0];
        shared[0] = x + 1;
        printf("round %d saw %d\n", i, x); /* each round */
    }
    pid_t pid = fork();
    if (pid == 0) {
        shared[1] = 42;
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    printf("the child wrote %d\n", shared[1]);
    madvise(shared, 4096, MADV_DONTNEED);
    printf("after MADV_DONTNEED: %d %d\n", shared[0], shared[1]);
    return 0;
}
