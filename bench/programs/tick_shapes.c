/* What the instruction counter's code shapes cost a tight loop (BENCHMARKS.md, "The counter's
 * cost per tick"): rec_cpu's 5-instruction loop, N iterations (argv[1]) in one of three
 * shapes (argv[2]), with the counter word at gs:[0] as hindsight installs it:
 *   0  the loop alone;
 *   1  `sub qword gs:[0], 256; je` at its head (a loop moved whole into its trampoline);
 *   2  the back edge to an island, a jump to the trampoline, the count, a jump back (three
 *      taken branches per iteration).
 * Prints the time per iteration.
 *
 *   gcc -O2 -o tick_shapes bench/programs/tick_shapes.c && ./tick_shapes 200000000 1 */
#include <asm/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static unsigned long page[512] __attribute__((aligned(4096)));

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000000L;
    int shape = argc > 2 ? atoi(argv[2]) : 0;
    if (n <= 0 || shape < 0 || shape > 2) {
        fprintf(stderr, "usage: tick_shapes N 0|1|2\n");
        return 2;
    }
    if (syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)page) != 0) {
        perror("arch_prctl");
        return 1;
    }
    page[0] = 1UL << 62;
    unsigned long x = 0x9e3779b97f4a7c15UL, k = 0x2545f4914f6cdd1dUL, m = n;
    double t0 = now();
    if (shape == 0)
        __asm__ volatile("1: add %2,%0; rol $7,%0; xor %1,%0; dec %1; jnz 1b"
                         : "+r"(x), "+r"(m) : "r"(k) : "cc");
    else if (shape == 1)
        __asm__ volatile("1: subq $256,%%gs:0; je 3f; add %2,%0; rol $7,%0; xor %1,%0; dec %1; jnz 1b; 3:"
                         : "+r"(x), "+r"(m) : "r"(k) : "cc", "memory");
    else
        __asm__ volatile("jmp 4f\n"
                         "2: subq $256,%%gs:0; je 3f; jmp 4f\n"  /* the trampoline */
                         "4: add %2,%0; rol $7,%0; xor %1,%0; dec %1; jnz 5f; jmp 3f\n"
                         "5: jmp 2b\n"                           /* the island */
                         "3:"
                         : "+r"(x), "+r"(m) : "r"(k) : "cc", "memory");
    double t = now() - t0;
    printf("shape %d: %.2f ns per iteration (x=%lu)\n", shape, t / n * 1e9, x);
    return 0;
}
