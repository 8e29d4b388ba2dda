/* Record/replay test: the 16 random bytes the kernel gives a new program (AT_RANDOM) and the
 * stack canary glibc derives from them. */
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const unsigned char *bytes = (const unsigned char *)getauxval(AT_RANDOM);
    unsigned long lo, hi;
    memcpy(&lo, bytes, 8);
    memcpy(&hi, bytes + 8, 8);
    unsigned long canary;
    __asm__("mov %%fs:0x28, %0" : "=r"(canary));
    printf("lo=%lu\n", lo); /* BREAK-HERE */
    printf("hi=%lu\n", hi);
    printf("canary=%lu\n", canary);
    return 0;
}
