/* Record/replay test: signals that arrive through a syscall's temporary mask (sigsuspend,
 * ppoll, pselect) and a poll that the kernel restarts after a signal without a handler
 * (restart_syscall must write what poll writes). */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

static volatile sig_atomic_t got;
static pthread_t main_thread;

static void on_signal(int sig)
{
    got = sig;
}

static void *sender(void *arg)
{
    int sig = (int)(long)arg;
    usleep(20000);
    pthread_kill(main_thread, sig);
    return NULL;
}

static void later(int sig)
{
    pthread_t t;
    pthread_create(&t, NULL, sender, (void *)(long)sig);
    pthread_detach(t);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    main_thread = pthread_self();
    unsigned long nonce = __rdtsc() % 1000003;
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    sigset_t blocked, open;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGUSR1);
    sigaddset(&blocked, SIGUSR2);
    sigaddset(&blocked, SIGALRM);
    sigprocmask(SIG_BLOCK, &blocked, NULL);
    sigemptyset(&open);

    later(SIGUSR1);
    int r1 = sigsuspend(&open);
    int suspended = got;

    int fds[2];
    pipe(fds);
    struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
    later(SIGUSR2);
    int r2 = ppoll(&pfd, 1, NULL, &open);
    int ppolled = got;

    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(fds[0], &rd);
    later(SIGALRM);
    int r3 = pselect(fds[0] + 1, &rd, NULL, NULL, NULL, &open);
    int pselected = got;

    /* A child that writes after a while; its SIGCHLD (no handler) interrupts the poll,
     * which the kernel restarts with restart_syscall. */
    pid_t child = fork();
    if (child == 0) {
        usleep(30000);
        write(fds[1], "x", 1);
        _exit(0);
    }
    usleep(10000);
    pid_t second = fork();
    if (second == 0) {
        usleep(5000);
        _exit(0);
    }
    pfd.revents = 0;
    int r4 = poll(&pfd, 1, 5000);
    int revents = pfd.revents;
    waitpid(child, NULL, 0);
    waitpid(second, NULL, 0);

    printf("nonce=%lu\n", nonce); /* BREAK-HERE */
    printf("suspended=%d r1=%d\n", suspended, r1);
    printf("ppolled=%d r2=%d\n", ppolled, r2);
    printf("pselected=%d r3=%d\n", pselected, r3);
    printf("revents=%d r4=%d\n", revents, r4);
    return 0;
}
