/* Multi-process test: a pipeline of three processes, producer | filter | consumer, over two
 * pipes. The producer (the parent) writes N numbers ("num 001\n", 8 bytes each); the filter
 * (first child) doubles each and passes it on; the consumer (second child) sums them. The
 * producer reaps both. Usage: mp_pipeline [N] (default 5). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int filter(int in, int out)
{
    char buf[9];
    while (read(in, buf, 8) == 8) {
        int v = atoi(buf + 4);
        snprintf(buf, sizeof buf, "num %03d\n", 2 * v); /* FILTER-GOT */
        if (write(out, buf, 8) != 8)
            return 1;
    }
    return 0;
}

static int consumer(int in)
{
    char buf[9] = {0};
    int sum = 0;
    while (read(in, buf, 8) == 8)
        sum += atoi(buf + 4);
    printf("consumer %d: sum=%d\n", getpid(), sum);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int n = argc > 1 ? atoi(argv[1]) : 5;
    int a[2], b[2];
    if (pipe(a) != 0 || pipe(b) != 0)
        return 1;
    pid_t f = fork();
    if (f == 0) {
        close(a[1]);
        close(b[0]);
        return filter(a[0], b[1]);
    }
    pid_t c = fork();
    if (c == 0) {
        close(a[0]);
        close(a[1]);
        close(b[1]);
        return consumer(b[0]);
    }
    close(a[0]);
    close(b[0]);
    close(b[1]);
    for (int k = 1; k <= n; k++) {
        char buf[9];
        snprintf(buf, sizeof buf, "num %03d\n", k);
        if (write(a[1], buf, 8) != 8)
            return 1;
    }
    close(a[1]);
    waitpid(f, NULL, 0); /* PRODUCER-WAIT */
    waitpid(c, NULL, 0);
    printf("producer %d: filter %d, consumer %d\n", getpid(), f, c);
    return 0;
}
