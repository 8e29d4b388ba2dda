/* A program that asks to be traced (as debuggers' test programs and anti-debugging code do):
 * under the recorder, which already traces it, the recording stops there in one line. */
#include <stdio.h>
#include <sys/ptrace.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("before ptrace\n");
    long r = ptrace(PTRACE_TRACEME, 0, 0, 0);
    printf("ptrace: %ld\n", r);
    return 0;
}
