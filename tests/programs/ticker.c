/* Prints "tick N" every 100 ms, COUNT times (default 50), then "done". With "int" as second
 * argument, a SIGINT handler prints where it landed and the program exits with status 3. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;

static void on_int(int sig)
{
    (void)sig;
    interrupted = 1;
}

int main(int argc, char **argv)
{
    int count = argc > 1 ? atoi(argv[1]) : 50;
    if (argc > 2 && strcmp(argv[2], "int") == 0)
        signal(SIGINT, on_int);
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 0; i < count; i++) {
        printf("tick %d\n", i);
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        if (interrupted) {
            printf("interrupted after tick %d\n", i);
            return 3;
        }
    }
    printf("done\n");
    return 0;
}
