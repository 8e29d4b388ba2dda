/* Record/replay test of the in-process agent: writes to the program's own /dev/null are
 * buffered even when hindsight's stdout is /dev/null too (the same device, another open
 * file), while what it prints to its stdout stays the recording's output. What it writes
 * depends on the clock, so two runs differ. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 300

int main(void)
{
    int null = open("/dev/null", O_WRONLY);
    if (null < 0)
        return 1;
    unsigned long sum = 0;
    for (int i = 0; i < ROUNDS; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        char line[64];
        int n = snprintf(line, sizeof line, "%d %ld\n", i, ts.tv_nsec);
        if (write(null, line, n) != n)
            return 2;
        sum = sum * 31 + (unsigned long)ts.tv_nsec;
    }
    /* Printed through the inherited stdout, one write per line. */
    char out[128];
    int n = snprintf(out, sizeof out, "sum=%lu\n", sum); /* BREAK-HERE */
    if (write(1, out, n) != n)
        return 3;
    n = snprintf(out, sizeof out, "rounds=%d\n", ROUNDS);
    if (write(1, out, n) != n)
        return 4;
    return 0;
}
