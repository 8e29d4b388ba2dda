/* Multi-process test: a server (the parent) listens on a Unix stream socket at PATH; a
 * client (its child) connects and sends N requests ("req 001\n", 8 bytes), each answered by
 * a reply ("rep 001\n") before the next. The server reaps the client with waitpid.
 * Usage: mp_unix PATH [N] (default 4). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int client(const struct sockaddr_un *addr, int n)
{
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0 || connect(s, (const struct sockaddr *)addr, sizeof *addr) != 0)
        return 1;
    for (int k = 1; k <= n; k++) {
        char req[9], rep[8];
        snprintf(req, sizeof req, "req %03d\n", k);
        if (write(s, req, 8) != 8) /* CLIENT-SEND */
            return 1;
        if (read(s, rep, sizeof rep) != sizeof rep)
            return 1;
    }
    close(s);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2)
        return 2;
    int n = argc > 2 ? atoi(argv[2]) : 4;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strncpy(addr.sun_path, argv[1], sizeof addr.sun_path - 1);
    unlink(argv[1]);
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(l, 1) != 0)
        return 1;
    pid_t child = fork();
    if (child == 0)
        return client(&addr, n);
    int c = accept(l, NULL, NULL);
    if (c < 0)
        return 1;
    int served = 0;
    for (;;) {
        char req[8];
        if (read(c, req, sizeof req) != sizeof req)
            break;
        int k = atoi(req + 4);
        served++; /* SERVER-GOT */
        char rep[9];
        snprintf(rep, sizeof rep, "rep %03d\n", k);
        if (write(c, rep, 8) != 8)
            return 1;
    }
    int status = 0;
    waitpid(child, &status, 0);
    unlink(argv[1]);
    printf("server %d: served %d, client %d exited %d\n", getpid(), served, child,
           WEXITSTATUS(status));
    return 0;
}
