/* waitid fills in the first fields of its siginfo even when it fails (here: no such child,
 * and a bad pidfd): the program sees zeros where it had put something else. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

static void show(const char *what, int r, siginfo_t *si)
{
    int *w = (int *)si;
    printf("%s: %d (%s): %d %d %d %d %d %d, then %d\n", what, r, r < 0 ? strerror(errno) : "",
           w[0], w[1], w[2], w[4], w[5], w[6], w[7]);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    siginfo_t si;
    memset(&si, 0x11, sizeof si);
    show("no child", waitid(P_ALL, 0, &si, WEXITED), &si);
    memset(&si, 0x22, sizeof si);
    show("bad pidfd", waitid((idtype_t)3 /* P_PIDFD */, 12345, &si, WEXITED), &si);
    return 0;
}
