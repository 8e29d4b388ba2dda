/* Time travel: a loop whose iterations make a syscall that is an event (so that replay time,
   counted in recorded events, moves on every iteration: sched_yield; the in-process agent
   buffers getppid), a helper that writes a global, and output that depends on the run. */
#include <sched.h>
#include <stdio.h>
#include <unistd.h>
long total;
int counter;

static void add_to_total(int v) {
    total += v; /* WRITE-HERE */
}

int square(int x) {
    int r = x * x;
    return r;
}

int main(void) {
    int pid = getpid();
    for (int i = 0; i < 8; i++) {
        counter = i;
        add_to_total(square(i));
        getppid(), sched_yield();
    }
    printf("pid=%d total=%ld\n", pid, total);
    return total == 140 ? 0 : 1;
}
