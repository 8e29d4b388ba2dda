/* Multi-process test: a parent and its child take turns over two pipes, each printing a
 * line at its turn (straight to stdout, unbuffered), so the run's output is
 * "parent: turn 1", "child: turn 1", "parent: turn 2"… in that order. Each turn is a call
 * of take_turn(). Usage: mp_talk [N] (default 3 turns each). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void take_turn(const char *who, int k)
{
    char line[64];
    int n = snprintf(line, sizeof line, "%s: turn %d\n", who, k);
    if (write(1, line, n) != n)
        exit(1);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3;
    int to_child[2], to_parent[2];
    char c = 0;
    if (pipe(to_child) != 0 || pipe(to_parent) != 0)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        for (int k = 1; k <= n; k++) {
            if (read(to_child[0], &c, 1) != 1)
                return 1;
            take_turn("child", k);
            if (write(to_parent[1], &c, 1) != 1)
                return 1;
        }
        return 0;
    }
    for (int k = 1; k <= n; k++) {
        take_turn("parent", k);
        if (write(to_child[1], &c, 1) != 1 || read(to_parent[0], &c, 1) != 1)
            return 1;
    }
    waitpid(child, NULL, 0);
    printf("parent: done\n");
    return 0;
}
