/* Globals, a struct and a pointer target for watchpoints. */
#include <stdio.h>

struct pair { long a, b; };

int counter;
struct pair pr;
long big;

void bump(int n) {
    counter += n;
}

int main(void) {
    long *p = &big;
    bump(1);
    bump(2);
    pr.b = 7;
    *p = 1234567890123;
    int seen = counter;
    printf("%d %ld %ld\n", seen, pr.b, big);
    return 0;
}
