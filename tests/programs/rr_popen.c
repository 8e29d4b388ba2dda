/* Record/replay test: popen of shell commands whose output differs from run to run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long run(const char *cmd, char *line, size_t size)
{
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    if (!fgets(line, (int)size, f))
        line[0] = 0;
    line[strcspn(line, "\n")] = 0;
    int st = pclose(f);
    return st;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    char a[64], b[64], c[64];
    long st_a = run("date +%N", a, sizeof a);
    long st_b = run("od -An -N4 -tu4 /dev/urandom", b, sizeof b);
    long st_c = run("echo $$", c, sizeof c);
    long nanos = atol(a);
    long random = atol(b);
    long shell_pid = atol(c);
    printf("nanos=%ld\n", nanos); /* BREAK-HERE */
    printf("random=%ld\n", random);
    printf("shell_pid=%ld\n", shell_pid);
    printf("status=%ld,%ld,%ld\n", st_a, st_b, st_c);
    return 0;
}
