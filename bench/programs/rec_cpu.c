/* CPU-bound, no syscalls: N iterations (argv[1], default 1 000 000 000) of a loop of exactly 5
 * instructions (add, rol, xor, dec, jnz), so that the work is 5 N instructions plus a few
 * hundred around it. The benchmark records it with hindsight and, with a smaller N, with
 * gdb's `record full`. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) unsigned long work(unsigned long n)
{
    unsigned long x = 0x9e3779b97f4a7c15UL, k = 0x2545f4914f6cdd1dUL;
    if (n == 0)
        return x;
    __asm__ volatile("1:\n\t"
                     "add %2, %0\n\t"
                     "rol $7, %0\n\t"
                     "xor %1, %0\n\t"
                     "dec %1\n\t"
                     "jnz 1b"
                     : "+r"(x), "+r"(n)
                     : "r"(k)
                     : "cc");
    return x;
}

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000000UL;
    printf("%lu\n", work(n));
    return 0;
}
