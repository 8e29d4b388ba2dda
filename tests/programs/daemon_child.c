/* A program that leaves a daemon behind: a grandchild in its own session that sleeps for an
 * hour. The recording ends when the program does (as with rr); the daemon is killed. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        if (fork() != 0)
            _exit(0);
        setsid();
        if (write(fds[1], "x", 1) != 1)
            _exit(1);
        sleep(3600);
        _exit(0);
    }
    char c;
    if (read(fds[0], &c, 1) != 1)
        return 1;
    int status;
    waitpid(child, &status, 0);
    printf("daemon started, first child exited with %d\n", WEXITSTATUS(status));
    return 0;
}
