/* Breakpoints, printing and stepping: small functions, globals of every base type. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct point {
    int x;
    int y;
};

struct record {
    char name[16];
    int id;
    double score;
    struct point pos;
    unsigned int flags;
};

int counter = 0;
long big_global = -1234567890123L;
unsigned int mask = 4000000000u;
double ratio = 2.5;
int arr[5] = {10, 20, 30, 40, 50};
char greeting[] = "hello, world";
const char *message = "a message";
struct record rec = {"widget", 7, 98.5, {3, -4}, 0xbeef};
struct record *recp = &rec;
int *nullp = 0;

int square(int v)
{
    int result = v * v;
    return result;
}

int add(int a, int b)
{
    int sum = a + b;
    counter++;
    return sum;
}

int level3(int depth, const char *tag)
{
    int local3 = depth * 100;
    return local3 + (int)strlen(tag);
}

int level2(int depth, struct point p)
{
    return level3(depth + 1, "deep") + p.x;
}

int level1(int depth)
{
    struct point p = {depth, depth * 2};
    return level2(depth + 1, p);
}

void loop(int n)
{
    int total = 0;
    for (int i = 0; i < n; i++) {
        total += add(i, i);
    }
    printf("loop total %d\n", total);
}

int main(void)
{
    fprintf(stderr, "pid %d\n", (int)getpid());
    int x = square(7);
    int y = add(x, 1);
    int neg = -5;
    unsigned char byte = 200;
    printf("square %d add %d\n", x, y);
    loop(10);
    int deep = level1(1);
    printf("deep %d neg %d byte %u\n", deep, neg, byte);
    return 0;
}
