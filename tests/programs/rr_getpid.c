/* Record/replay test: the process's ids (the replay must answer with the recorded ones). */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int pid = getpid();
    int ppid = getppid();
    int tid = (int)syscall(SYS_gettid);
    fprintf(stderr, "pid %d\n", pid);
    printf("pid=%d\n", pid); /* BREAK-HERE */
    printf("ppid=%d\n", ppid);
    printf("tid=%d\n", tid);
    return pid == tid ? 0 : 1;
}
