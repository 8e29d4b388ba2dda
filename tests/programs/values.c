/* Values of many types, for print. */
#include <stdio.h>
#include <string.h>

struct point { int x, y; };
struct shape { const char *name; struct point corners[2]; double scale; };
enum color { RED, GREEN, BLUE };
typedef struct point point_t;

int global_count = 42;
double ratio = 2.5;
char greeting[16] = "hello";
int primes[5] = {2, 3, 5, 7, 11};
int zeros[16];

int area(struct shape *s, int factor) {
    int w = s->corners[1].x - s->corners[0].x;
    int h = s->corners[1].y - s->corners[0].y;
    int result = w * h * factor;
    return result;
}

int main(int argc, char **argv) {
    struct shape sq = { "square", { {1, 2}, {4, 6} }, 1.5 };
    point_t origin = { 0, -1 };
    enum color c = GREEN;
    unsigned int big = 4000000000u;
    char letter = 'A';
    short neg = -12;
    float f = 3.14f;
    int *none = NULL;
    int a = area(&sq, 2);
    printf("%d %d %d %u %c %d %f %p\n", a, origin.y, c, big, letter, neg, f, (void *)none);
    return 0;
}
