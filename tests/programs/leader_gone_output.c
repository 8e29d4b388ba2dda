/* The main thread leaves with the exit syscall (not exit_group) before a new thread even
 * starts: the thread's lines are written while the leader is a zombie. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *last(void *arg)
{
    (void)arg;
    usleep(10000);
    printf("written after the main thread left\n");
    fflush(stdout);
    exit(0);
}

int main(void)
{
    pthread_t t;
    printf("main thread\n");
    fflush(stdout);
    pthread_create(&t, NULL, last, NULL);
    syscall(SYS_exit, 0);
    return 1;
}
