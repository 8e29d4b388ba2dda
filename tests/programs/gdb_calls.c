/* gdb front end: calls into the C library (errno from a failing open, output), a recursive
   function, a struct changed through a pointer, and an exit status. Line numbers are used by
   tests/gdbserver.rs. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct point { int x, y; };
int calls;

int fact(int n) {
    calls++;
    if (n <= 1)
        return 1;
    return n * fact(n - 1);
}

void move(struct point *p, int dx) {
    p->x += dx;
    p->y -= dx;
}

int main(void) {
    struct point pt = {1, 2};
    char *buf = malloc(32);
    strcpy(buf, "hello");
    int fd = open("/nonexistent/file", O_RDONLY);
    int e = errno;
    printf("fd=%d errno=%d\n", fd, e);
    for (int i = 0; i < 3; i++)
        move(&pt, i);
    int f = fact(5);
    printf("f=%d pt=%d,%d %s\n", f, pt.x, pt.y, buf);
    free(buf);
    return 3;
}
