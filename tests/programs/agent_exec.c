/* Record/replay test of the in-process agent: a program that removes LD_PRELOAD (and every
 * other variable) from its environment and execs itself; the new program's calls are still
 * buffered (hindsight maps its agent into each new program, whatever the environment says). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned long digest(void)
{
    int fd = open("/dev/urandom", O_RDONLY);
    unsigned long h = 14695981039346656037UL;
    for (int i = 0; i < 64; i++) {
        unsigned char b[8];
        if (read(fd, b, sizeof b) != sizeof b)
            return 0;
        for (int j = 0; j < 8; j++)
            h = (h ^ b[j]) * 1099511628211UL;
    }
    close(fd);
    return h % 1000000007;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        unsigned long child = digest();
        printf("child=%lu\n", child); /* BREAK-HERE */
        printf("preload=%s\n", getenv("LD_PRELOAD") ? "set" : "unset");
        return 0;
    }
    printf("parent=%lu\n", digest());
    unsetenv("LD_PRELOAD");
    char *args[] = {argv[0], "child", NULL};
    char *env[] = {NULL};
    execve("/proc/self/exe", args, env);
    perror("execve");
    return 1;
}
