/* Record/replay test of the in-process agent: signals that interrupt buffered syscalls.
 * 1. A read of an empty pipe, interrupted by a timer signal whose handler has no SA_RESTART:
 *    the read fails with EINTR.
 * 2. The same with SA_RESTART, the handler writing the time into the pipe: the read restarts
 *    and returns what the handler wrote.
 * 3. A loop of quick buffered calls (reads of /dev/zero, clock_gettime) under a 1 ms timer:
 *    signals land inside and between them; how many, and the times the handler saw, differ
 *    from run to run. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static volatile long hits, seen;

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void count(int sig)
{
    (void)sig;
    hits++;
    seen = (seen * 31 + now_ns() % 1000) % 1000000007;
}

static void fill(int sig)
{
    (void)sig;
    long v = now_ns() % 1000000;
    if (write(fds[1], &v, sizeof v) != sizeof v)
        _exit(4);
}

static void on(int sig, void (*h)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sa.sa_flags = flags;
    sigaction(sig, &sa, NULL);
}

static void timer(long first_us, long every_us)
{
    struct itimerval it = {{0, every_us}, {0, first_us}};
    setitimer(ITIMER_REAL, &it, NULL);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (pipe(fds))
        return 1;

    on(SIGALRM, count, 0);
    timer(5000, 0);
    long v;
    ssize_t n = read(fds[0], &v, sizeof v);
    int e = errno;
    printf("interrupted=%s\n", n == -1 && e == EINTR ? "EINTR" : "no");

    on(SIGALRM, fill, SA_RESTART);
    timer(5000, 0);
    n = read(fds[0], &v, sizeof v);
    long restarted = n == sizeof v ? v : -1;
    printf("restarted=%ld\n", restarted);

    on(SIGALRM, count, SA_RESTART);
    hits = 0;
    int zero = open("/dev/zero", O_RDONLY);
    char buf[256];
    long calls = 0, start = now_ns();
    timer(1000, 1000);
    while (now_ns() - start < 60000000L && hits < 40) {
        if (read(zero, buf, sizeof buf) != sizeof buf)
            return 5;
        calls++;
    }
    timer(0, 0);
    long nhits = hits, digest = seen;
    printf("nhits=%ld\n", nhits); /* BREAK-HERE */
    printf("digest=%ld\n", digest);
    printf("calls=%ld\n", calls);
    return 0;
}
