/* Record/replay test: prints a random value, then writes into a pipe whose reading end is
 * closed. With SIGPIPE at its default (as a shell starts a program) the write kills it;
 * were SIGPIPE inherited as ignored, it would get EPIPE and exit 3 instead. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <x86intrin.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsigned long value = __rdtsc() % 1000003;
    printf("value=%lu\n", value); /* BREAK-HERE */
    int fds[2];
    if (pipe(fds) != 0)
        return 2;
    close(fds[0]);
    if (write(fds[1], "x", 1) < 0)
        perror("write");
    return 3;
}
