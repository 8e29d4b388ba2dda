/* Record/replay test: the time-stamp counter, by inline rdtsc and by __rdtsc/__rdtscp. */
#include <stdio.h>
#include <x86intrin.h>

static unsigned long long rdtsc_asm(void)
{
    unsigned int lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (unsigned long long)hi << 32 | lo;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsigned long long t1 = rdtsc_asm();
    unsigned long long t2 = __rdtsc();
    unsigned int aux = 0;
    unsigned long long t3 = __rdtscp(&aux);
    /* A hundred more, folded into one number. */
    unsigned long long mix = 0;
    for (int i = 0; i < 100; i++)
        mix = mix * 1000003 ^ (i % 2 ? __rdtsc() : rdtsc_asm());
    int ordered = t1 <= t2 && t2 <= t3;
    unsigned long long low = t3 % 1000000007ULL;
    printf("t1=%llu\n", t1); /* BREAK-HERE */
    printf("t2=%llu\n", t2);
    printf("t3=%llu\n", t3);
    printf("low=%llu\n", low);
    printf("mix=%llu\n", mix);
    printf("ordered=%d\n", ordered);
    return 0;
}
