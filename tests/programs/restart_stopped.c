/* Record/replay test of the kernel's silent restarts: two threads block, one in a read of a
 * pipe and one in a condition wait (a futex), when the whole process is stopped (SIGSTOP,
 * then SIGCONT from a child). No handler runs, so the kernel restarts both calls and the
 * program never sees them interrupted; under a tracer each call ends first with a restart
 * code (-ERESTARTSYS) that no signal of that thread follows. A replay must restart them too:
 * a program that saw the code would print an error. What they get is the time (two runs
 * differ). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static long given, woke, got;
static long nread = -2;

static void *reader(void *arg)
{
    (void)arg;
    nread = read(fds[0], &got, sizeof got);
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    while (given == 0)
        pthread_cond_wait(&cond, &lock);
    woke = given;
    pthread_mutex_unlock(&lock);
    return NULL;
}

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_nsec | 1;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (pipe(fds))
        return 1;
    pthread_t r, w;
    pthread_create(&r, NULL, reader, NULL);
    pthread_create(&w, NULL, waiter, NULL);
    usleep(100000); /* both are blocked by now */
    pid_t child = fork();
    if (child == 0) {
        usleep(100000);
        kill(getppid(), SIGCONT);
        _exit(0);
    }
    raise(SIGSTOP); /* until the child's SIGCONT */
    long v = now_ns();
    if (write(fds[1], &v, sizeof v) != sizeof v)
        return 1;
    pthread_mutex_lock(&lock);
    given = now_ns();
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    pthread_join(r, NULL);
    pthread_join(w, NULL);
    waitpid(child, NULL, 0);
    if (nread != sizeof got || got != v || woke != given) {
        printf("read %ld, got %ld of %ld, woke %ld of %ld\n", nread, got, v, woke, given);
        return 1;
    }
    printf("got=%ld\nwoke=%ld\n", got, woke); /* BREAK-HERE */
    return 0;
}
