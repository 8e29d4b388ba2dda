/* Record/replay test: synchronous and thread-directed signals. raise(SIGUSR1) runs a handler
 * that reads the time-stamp counter; SIGUSR2 (no SA_RESTART) interrupts a thread blocked in
 * read(); SIGCHLD arrives when a child exits with a random code. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

static volatile sig_atomic_t usr1, usr2, chld;
static volatile unsigned long handler_tsc;
static int pfd[2];
static long first_read;
static int first_errno;
static int got_byte = -1;

static void on_usr1(int sig)
{
    (void)sig;
    usr1++;
    handler_tsc = __rdtsc();
}

static void on_usr2(int sig)
{
    (void)sig;
    usr2++;
}

static void on_chld(int sig)
{
    (void)sig;
    chld++;
}

static void *reader(void *arg)
{
    (void)arg;
    unsigned char c = 0;
    ssize_t n = read(pfd[0], &c, 1);
    first_read = n;
    first_errno = n < 0 ? errno : 0;
    if (n < 0)
        n = read(pfd[0], &c, 1);
    if (n == 1)
        got_byte = c;
    return NULL;
}

static void handle(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa = {0};
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigaction(sig, &sa, NULL);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    handle(SIGUSR1, on_usr1, SA_RESTART);
    handle(SIGUSR2, on_usr2, 0);
    handle(SIGCHLD, on_chld, SA_RESTART);
    unsigned char r[2];
    if (getrandom(r, sizeof r, 0) != sizeof r)
        return 1;
    raise(SIGUSR1);
    if (pipe(pfd) != 0)
        return 1;
    pthread_t t;
    pthread_create(&t, NULL, reader, NULL);
    usleep(20000);
    pthread_kill(t, SIGUSR2);
    usleep(5000);
    unsigned char byte = r[0];
    if (write(pfd[1], &byte, 1) != 1)
        return 1;
    pthread_join(t, NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(r[1] % 50);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    int child_code = WEXITSTATUS(status);
    unsigned long tsc = handler_tsc;
    int sent = byte;
    int received = got_byte;
    printf("tsc=%lu\n", tsc); /* BREAK-HERE */
    printf("sent=%d\n", sent);
    printf("received=%d\n", received);
    printf("child_code=%d\n", child_code);
    printf("first_read=%ld errno=%d\n", first_read, first_errno);
    printf("handlers=%d,%d,%d\n", (int)usr1, (int)usr2, (int)chld);
    return 0;
}
