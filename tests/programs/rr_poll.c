/* Record/replay test: waiting with timeouts (poll, select, epoll_wait, nanosleep) while a
 * thread writes to a pipe after a random delay; the measured waits differ from run to run. */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static int pfd[2];
static unsigned int delay_us;

static long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static void *writer(void *arg)
{
    (void)arg;
    usleep(delay_us);
    unsigned char b = (unsigned char)(now_us() & 0xff);
    if (write(pfd[1], &b, 1) != 1)
        return NULL;
    return NULL;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (getrandom(&delay_us, sizeof delay_us, 0) != sizeof delay_us || pipe(pfd) != 0)
        return 1;
    delay_us = 2000 + delay_us % 5000;
    /* select on the empty pipe: times out, and the kernel writes back the time left. */
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(pfd[0], &rd);
    struct timeval tv = {0, 1500};
    int sel = select(pfd[0] + 1, &rd, NULL, NULL, &tv);
    long sel_left = tv.tv_usec;
    /* epoll_wait with a timeout on the empty pipe, then a thread writes and poll waits. */
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0x1234567890abcdefULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, pfd[0], &ev);
    struct epoll_event out = {0};
    int ep_timeout = epoll_wait(ep, &out, 1, 2);
    pthread_t t;
    pthread_create(&t, NULL, writer, NULL);
    long t0 = now_us();
    struct pollfd p = {.fd = pfd[0], .events = POLLIN};
    int polled = poll(&p, 1, 2000);
    long waited = now_us() - t0;
    int ep_ready = epoll_wait(ep, &out, 1, 1000);
    unsigned long long token = out.data.u64;
    unsigned char b = 0;
    if (read(pfd[0], &b, 1) != 1)
        return 1;
    pthread_join(t, NULL);
    struct timespec req = {0, 1000000}, rem = {0, 0};
    long t1 = now_us();
    nanosleep(&req, &rem);
    long slept = now_us() - t1;
    int byte = b;
    printf("waited=%ld\n", waited); /* BREAK-HERE */
    printf("slept=%ld\n", slept);
    printf("byte=%d\n", byte);
    printf("token=%llu\n", token);
    printf("results=%d,%ld,%d,%d,%d,%d\n", sel, sel_left, ep_timeout, polled, p.revents, ep_ready);
    printf("delay_us=%u\n", delay_us);
    return 0;
}
