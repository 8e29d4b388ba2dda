/* Time travel: a loop whose iterations each make a syscall (so that replay time, counted in
   recorded events, moves on every iteration), a helper function that writes a global, and
   output that depends on the run (the pid). */
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
        getppid();
    }
    printf("pid=%d total=%ld\n", pid, total);
    return total == 140 ? 0 : 1;
}
