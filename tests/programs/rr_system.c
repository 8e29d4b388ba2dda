/* Record/replay test: system(); the commands write to the same stdout as the program. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("before\n");
    int st1 = system("echo \"nanos $(date +%N)\"");
    int st2 = system("echo \"bytes $(od -An -N6 -tx1 /dev/urandom | tr -d ' ')\"");
    int st3 = system("exit 5");
    int code = WEXITSTATUS(st3);
    int ok = st1 == 0 && st2 == 0;
    printf("code=%d\n", code); /* BREAK-HERE */
    printf("ok=%d\n", ok);
    return 0;
}
