/* A Unix socket client that sends before its server accepts the connection: the server
 * waits 200 ms before accept(), then reads the client's three requests ("req", 3 bytes each,
 * possibly in one read) and answers "ack". Usage: mp_late_accept SOCKET-PATH.
 * Prints "server S got 9" and "client C got ack". */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
    unlink(argv[1]);
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (const struct sockaddr *)&a, sizeof a) != 0 || listen(l, 1) != 0)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        if (s < 0 || connect(s, (const struct sockaddr *)&a, sizeof a) != 0)
            return 1;
        for (int i = 0; i < 3; i++)
            if (write(s, "req", 3) != 3)
                return 1;
        char b[3];
        if (read(s, b, 3) != 3)
            return 1;
        printf("client %d got %.3s\n", (int)getpid(), b);
        return 0;
    }
    usleep(200000);
    int c = accept(l, NULL, NULL);
    char b[9];
    int n = 0;
    while (n < 9) {
        int k = (int)read(c, b + n, sizeof b - n);
        if (k <= 0)
            break;
        n += k;
    }
    if (write(c, "ack", 3) != 3)
        return 1;
    int status;
    waitpid(child, &status, 0);
    unlink(argv[1]);
    printf("server %d got %d\n", (int)getpid(), n);
    return 0;
}
