/* Globals changed and read one statement at a time, for watchpoints. */
#include <stdio.h>
#include <unistd.h>

struct pair {
    int first;
    int second;
};

struct wide {
    long lo;
    long hi;
};

int g = 1;
struct pair s = {10, 20};
long big = 100;
long *p = &big;
struct wide w = {1, 2};
int reads = 5;
int a1, a2, a3, a4, a5;

void set_g(int v)
{
    g = v;
}

int main(void)
{
    fprintf(stderr, "pid %d\n", (int)getpid());
    int local = 0;
    g = 2;
    s.second = 21;
    *p = 0x100000000L;
    local = reads;
    reads = local + 1;
    w.hi = 3;
    w.lo = -7;
    set_g(5);
    a1 = 1;
    a2 = 2;
    a3 = 3;
    a4 = 4;
    a5 = 5;
    printf("g %d second %d big %ld reads %d w %ld %ld a5 %d\n", g, s.second, big, reads, w.lo,
           w.hi, a5);
    return 0;
}
