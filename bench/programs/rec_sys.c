/* Syscall-bound: N (argv[1], default 300 000) pairs of a 64-byte read() from /dev/zero and a
 * 64-byte write() to /dev/null. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 300000;
    int in = open("/dev/zero", O_RDONLY);
    int out = open("/dev/null", O_WRONLY);
    if (in < 0 || out < 0)
        return 1;
    char buf[64];
    long total = 0;
    for (long i = 0; i < n; i++) {
        ssize_t r = read(in, buf, sizeof buf);
        if (r <= 0 || write(out, buf, r) != r)
            return 1;
        total += r;
    }
    printf("%ld\n", total);
    return 0;
}
