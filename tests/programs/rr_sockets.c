/* Record/replay test: a file descriptor passed over a UNIX socket (sendmsg/recvmsg with
 * SCM_RIGHTS, data scattered over several buffers), a memfd read with pread through it,
 * datagrams with recvfrom. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsigned long rnd[8];
    if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd)
        return 1;
    int mfd = memfd_create("rr-sockets", 0);
    if (mfd < 0 || write(mfd, rnd, sizeof rnd) != sizeof rnd)
        return 1;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 1;
    /* Send "hdr" + rnd[0] + rnd[1] with the memfd attached. */
    char hdr[4] = "hdr";
    struct iovec out_iov[2] = {{hdr, 4}, {rnd, 16}};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } out_ctl, in_ctl;
    memset(&out_ctl, 0, sizeof out_ctl);
    memset(&in_ctl, 0, sizeof in_ctl);
    struct msghdr msg = {0};
    msg.msg_iov = out_iov;
    msg.msg_iovlen = 2;
    msg.msg_control = out_ctl.buf;
    msg.msg_controllen = sizeof out_ctl.buf;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &mfd, sizeof(int));
    if (sendmsg(sv[0], &msg, 0) != 20)
        return 1;
    /* Receive into three buffers cut elsewhere. */
    char a[6], b[7], d[7];
    struct iovec in_iov[3] = {{a, 6}, {b, 7}, {d, 7}};
    struct msghdr in = {0};
    in.msg_iov = in_iov;
    in.msg_iovlen = 3;
    in.msg_control = in_ctl.buf;
    in.msg_controllen = sizeof in_ctl.buf;
    ssize_t got = recvmsg(sv[1], &in, 0);
    int passed = -1;
    struct cmsghdr *ic = CMSG_FIRSTHDR(&in);
    if (ic && ic->cmsg_type == SCM_RIGHTS)
        memcpy(&passed, CMSG_DATA(ic), sizeof(int));
    unsigned char joined[20];
    memcpy(joined, a, 6);
    memcpy(joined + 6, b, 7);
    memcpy(joined + 13, d, 7);
    unsigned long first, second;
    memcpy(&first, joined + 4, 8);
    memcpy(&second, joined + 12, 8);
    /* The passed descriptor. */
    unsigned long via_pread = 0;
    if (pread(passed, &via_pread, 8, 16) != 8)
        return 1;
    /* Datagrams. */
    int dg[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, dg) != 0)
        return 1;
    send(dg[0], &rnd[4], 8, 0);
    unsigned long dgram = 0;
    struct sockaddr_un from;
    socklen_t fromlen = sizeof from;
    ssize_t dlen = recvfrom(dg[1], &dgram, sizeof dgram, 0, (struct sockaddr *)&from, &fromlen);
    int fd_is_new = passed != mfd && passed >= 0;
    printf("first=%lu\n", first); /* BREAK-HERE */
    printf("second=%lu\n", second);
    printf("via_pread=%lu\n", via_pread);
    printf("dgram=%lu\n", dgram);
    printf("checks=%d,%d,%d,%d,%d\n", (int)got, fd_is_new, first == rnd[0], via_pread == rnd[2],
           (int)dlen);
    return 0;
}
