/* Multi-process test: the parent forks a worker that runs a second thread, then a second
 * child that exits at once. The worker's helper thread writes "ok\n" to a pipe that the
 * parent reads before it forks the second child; the worker exits with code 3, the second
 * child with 0, and the parent reaps both. Build with -pthread. */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int fds[2];

static void *helper(void *arg)
{
    (void)arg;
    if (write(fds[1], "ok\n", 3) != 3) /* HELPER-WRITE */
        return arg;
    return NULL;
}

static int worker(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, helper, NULL) != 0)
        return 1;
    pthread_join(t, NULL); /* WORKER-JOIN */
    return 3;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (pipe(fds) != 0)
        return 1;
    pid_t a = fork();
    if (a < 0)
        return 1;
    if (a == 0) {
        close(fds[0]);
        return worker();
    }
    close(fds[1]);
    char buf[3];
    if (read(fds[0], buf, sizeof buf) != sizeof buf) /* PARENT-READ */
        return 1;
    pid_t b = fork();
    if (b < 0)
        return 1;
    if (b == 0)
        return 0;
    int sa = 0, sb = 0;
    waitpid(a, &sa, 0);
    waitpid(b, &sb, 0);
    printf("parent %d: worker %d exited %d, child %d exited %d\n", getpid(), a,
           WEXITSTATUS(sa), b, WEXITSTATUS(sb));
    return 0;
}
