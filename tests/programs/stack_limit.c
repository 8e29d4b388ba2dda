/* The program lowers its own stack limit, then recurses until the stack overflows (a SIGSEGV
 * handled on an alternate stack): how deep it got depends on the limit, which replay must
 * set too. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

static volatile int depth;

static void on_segv(int sig)
{
    (void)sig;
    char line[64];
    int n = snprintf(line, sizeof line, "overflowed at depth %d\n", depth);
    write(1, line, n);
    _exit(0);
}

static int recurse(void)
{
    char pad[256];
    pad[0] = (char)depth;
    ++depth;
    return recurse() + pad[0];
}

int main(void)
{
    stack_t alt = {.ss_sp = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                 -1, 0),
                   .ss_size = 65536};
    sigaltstack(&alt, NULL);
    struct sigaction sa = {.sa_handler = on_segv, .sa_flags = SA_ONSTACK};
    sigaction(SIGSEGV, &sa, NULL);
    struct rlimit r = {512 * 1024, 512 * 1024};
    if (setrlimit(RLIMIT_STACK, &r) != 0)
        return 1;
    return recurse();
}
