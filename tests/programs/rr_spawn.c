/* Record/replay test: posix_spawn (a vfork-style clone) of a shell that prints its pid and
 * random bytes to the same stdout. */
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    pid_t pid = 0;
    char *argv[] = {"sh", "-c", "echo \"spawned $$ $(od -An -N4 -tu4 /dev/urandom | tr -d ' ')\"; exit 4", NULL};
    int err = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ);
    int status = 0;
    waitpid(pid, &status, 0);
    int spawned = pid;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    printf("spawned=%d\n", spawned); /* BREAK-HERE */
    printf("code=%d\n", code);
    printf("err=%d\n", err);
    return 0;
}
