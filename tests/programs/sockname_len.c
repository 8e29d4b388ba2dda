/* getsockname without an address buffer still tells the address's length; accept leaves the
 * length alone without one. */
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    socklen_t len = 0;
    int r = getsockname(fd, NULL, &len);
    printf("getsockname: %d, length %u\n", r, (unsigned)len);
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    len = 0;
    r = getpeername(sv[0], NULL, &len);
    printf("getpeername: %d, length %u\n", r, (unsigned)len);
    return 0;
}
