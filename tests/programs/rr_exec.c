/* Record/replay test: a program that executes itself again (same pid, new program) with a
 * random value as argument; the second stage adds a random value of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static int stage2(const char *arg, unsigned int mine)
{
    unsigned long inherited = strtoul(arg, NULL, 10);
    unsigned long combined = inherited * 1000003UL + mine;
    int pid2 = getpid();
    printf("combined=%lu\n", combined); /* BREAK-HERE */
    printf("inherited=%lu\n", inherited);
    printf("pid2=%d\n", pid2);
    return 3;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsigned int value = 0;
    if (getrandom(&value, sizeof value, 0) != sizeof value)
        return 1;
    if (argc > 2 && strcmp(argv[1], "stage2") == 0)
        return stage2(argv[2], value);
    printf("value1=%u\n", value);
    printf("pid1=%d\n", getpid());
    char arg[32];
    snprintf(arg, sizeof arg, "%u", value);
    execl("/proc/self/exe", argv[0], "stage2", arg, (char *)NULL);
    perror("execl");
    return 1;
}
