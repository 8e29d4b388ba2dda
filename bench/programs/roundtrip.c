/* The floor for any ptrace debugger: a tracer that lets its child execute an int3 N times,
 * resuming it after each stop, with both pinned to one CPU. Prints nanoseconds per stop. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 10000;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(sched_getcpu(), &set);
    sched_setaffinity(0, sizeof set, &set);
    pid_t pid = fork();
    if (pid == 0) {
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        raise(SIGSTOP);
        for (long i = 0; i < n; i++) __asm__ volatile("int3");
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    ptrace(PTRACE_CONT, pid, 0, 0);
    long stops = 0;
    for (;;) {
        waitpid(pid, &status, 0);
        if (WIFEXITED(status)) break;
        stops++;
        ptrace(PTRACE_CONT, pid, 0, 0);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
    printf("%.0f\n", ns / (stops ? stops : 1));
    return 0;
}
