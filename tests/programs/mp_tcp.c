/* Multi-process test: a server (the parent) listens on a loopback TCP port chosen by the
 * kernel; a client (its child) connects and sends N requests ("req 001\n", 8 bytes), each
 * answered by a reply of 4 bytes ("ok!\n") before the next. The server reaps the client.
 * Usage: mp_tcp [N] (default 3). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int n = argc > 1 ? atoi(argv[1]) : 3;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(l, 1) != 0 ||
        getsockname(l, (struct sockaddr *)&addr, &len) != 0)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (s < 0 || connect(s, (struct sockaddr *)&addr, sizeof addr) != 0)
            return 1;
        for (int k = 1; k <= n; k++) {
            char req[9], rep[4];
            snprintf(req, sizeof req, "req %03d\n", k);
            if (write(s, req, 8) != 8 || recv(s, rep, 4, MSG_WAITALL) != 4)
                return 1;
        }
        return 0;
    }
    int c = accept(l, NULL, NULL);
    char req[8];
    int served = 0;
    while (recv(c, req, 8, MSG_WAITALL) == 8) {
        served++;
        if (write(c, "ok!\n", 4) != 4)
            return 1;
    }
    int status = 0;
    waitpid(child, &status, 0);
    printf("server %d: served %d, client %d exited %d\n", getpid(), served, child,
           WEXITSTATUS(status));
    return 0;
}
