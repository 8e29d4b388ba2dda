/* Exits with status 3 (argv[1] overrides), or sleeps forever with "sleep". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    fprintf(stderr, "pid %d\n", (int)getpid());
    if (argc > 1 && strcmp(argv[1], "sleep") == 0) {
        for (;;)
            pause();
    }
    int code = argc > 1 ? atoi(argv[1]) : 3;
    printf("exiting with %d\n", code);
    return code;
}
