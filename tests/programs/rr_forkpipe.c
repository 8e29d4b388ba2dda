/* Record/replay test: fork + pipe. The child reads /dev/urandom and sends a value and its pid
 * through the pipe; the parent prints them and the child's exit status. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

struct message {
    unsigned long value;
    int pid;
};

static int child(int out)
{
    unsigned long value = 0;
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd < 0 || read(fd, &value, sizeof value) != sizeof value)
        return 1;
    close(fd);
    value %= 1000000007UL;
    int me = getpid();
    printf("child %d: value=%lu\n", me, value); /* BREAK-HERE: child */
    struct message m = {value, me};
    if (write(out, &m, sizeof m) != sizeof m)
        return 1;
    close(out);
    return 7;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        return 1;
    }
    int parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        close(fds[0]);
        exit(child(fds[1]));
    }
    close(fds[1]);
    struct message m = {0, 0};
    ssize_t got = 0;
    while (got < (ssize_t)sizeof m) {
        ssize_t n = read(fds[0], (char *)&m + got, sizeof m - got);
        if (n <= 0)
            break;
        got += n;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    unsigned long child_value = m.value;
    int child_pid = m.pid;
    int child_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    printf("parent=%d\n", parent);
    printf("child_value=%lu\n", child_value); /* BREAK-HERE */
    printf("child_pid=%d\n", child_pid);
    printf("fork_result=%d\n", (int)pid);
    printf("child_code=%d\n", child_code);
    return 0;
}
