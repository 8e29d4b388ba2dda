/* A thread's fault kills its whole process while the other threads run (and yield): the
 * recorder finds the process's memory gone between two of their stops. Also exec from a
 * thread, which ends the other threads the same way. The parent reports how each child
 * ended. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *spin(void *arg)
{
    (void)arg;
    for (;;)
        sched_yield();
    return NULL;
}

static void *crash(void *arg)
{
    (void)arg;
    *(volatile int *)0 = 1;
    return NULL;
}

static void *run_exec(void *arg)
{
    execl((const char *)arg, (const char *)arg, "exec'd", (char *)NULL);
    return NULL;
}

static void child(int round, const char *self)
{
    pthread_t t;
    for (int i = 0; i < 8; i++)
        pthread_create(&t, NULL, spin, NULL);
    pthread_create(&t, NULL, round % 2 ? run_exec : crash, (void *)self);
    pthread_join(t, NULL);
    _exit(3);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1) {
        printf("exec'd from a thread\n");
        return 7;
    }
    for (int round = 0; round < 6; round++) {
        pid_t pid = fork();
        if (pid == 0)
            child(round, argv[0]);
        int status;
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status))
            printf("round %d: killed by %s\n", round, strsignal(WTERMSIG(status)));
        else
            printf("round %d: exit %d\n", round, WEXITSTATUS(status));
    }
    return 0;
}
