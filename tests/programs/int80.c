/* A 64-bit program making a 32-bit syscall (int $0x80: getpid is 20 in that table, where 20
 * is writev in the 64-bit one): the recorder refuses it by name. */
#include <stdio.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("before int 0x80\n");
    long r;
    __asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
    printf("32-bit getpid: %ld\n", r);
    return 0;
}
