/* A call chain main -> outer -> middle -> leaf whose innermost frame records its own
 * registers and a copy of its stack, so that tests can unwind a real stack offline.
 * Usage: chain DUMPFILE. Dump layout: rip, rsp, rbp, &marker, base (little-endian u64
 * each), then STACK_COPY bytes starting at base = rsp - RED_ZONE (leaf functions keep their
 * locals below rsp), zero past the end of the stack mapping. */
#include <stdio.h>
#include <string.h>
#include <stdint.h>

#define STACK_COPY 4096
#define RED_ZONE 128

struct point { int x; int y; };
typedef struct point point_t;
struct node { int value; struct node *next; };
union number { int i; float f; };
enum color { RED, GREEN = 5, BLUE };

int counter = 7;
static double ratio = 1.5;
struct node *head;

static uint64_t regs_out[5];
static unsigned char stack_copy[STACK_COPY];
/* End of the [stack] mapping: the copy stops there (the rest stays zero), because with ASLR
 * the top of the stack can be closer to rsp than STACK_COPY bytes. */
static uint64_t stack_end;

static void find_stack_end(void)
{
    FILE *m = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long lo, hi;
    if (!m)
        return;
    while (fgets(line, sizeof line, m))
        if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
            stack_end = hi;
    fclose(m);
}

/* How much of the stack from `base` can be copied (leaf's locals are what the tests list,
 * so the computation lives here). */
static uint64_t copy_length(uint64_t base)
{
    if (stack_end && stack_end - base < STACK_COPY)
        return stack_end - base;
    return STACK_COPY;
}

__attribute__((noinline)) int leaf(int depth, point_t p)
{
    int marker = 42 + depth;
    uint64_t rip, rsp, rbp;
    __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
                     : "=r"(rip), "=r"(rsp), "=r"(rbp));
    regs_out[0] = rip;
    regs_out[1] = rsp;
    regs_out[2] = rbp;
    regs_out[3] = (uint64_t)&marker;
    regs_out[4] = rsp - RED_ZONE;
    memcpy(stack_copy, (void *)(rsp - RED_ZONE), copy_length(rsp - RED_ZONE));
    return marker + p.x;
}

__attribute__((noinline)) int middle(int n)
{
    point_t p = { n, n * 2 };
    int r = 0;
    for (int i = 0; i < 1; i++) {
        int inner = i + n;
        r += leaf(inner, p);
    }
    return r + 1;
}

__attribute__((noinline)) int outer(int a, int b)
{
    int s = a + b;

    return middle(s) + 0;
}

int tally(void)
{
    static int calls;
    calls++;
    return calls + counter;
}

int main(int argc, char **argv)
{
    struct node n = { 1, 0 };
    union number num;
    enum color c = GREEN;
    head = &n;
    num.i = 3;
    find_stack_end();
    int r = outer(argc, 2);
    FILE *f = fopen(argc > 1 ? argv[1] : "dump.bin", "wb");
    if (!f)
        return 1;
    fwrite(regs_out, sizeof regs_out, 1, f);
    fwrite(stack_copy, sizeof stack_copy, 1, f);
    fclose(f);
    printf("%d %d %d %d %g\n", r, c, num.i, tally(), ratio);
    return 0;
}
