/* Replaces itself with the program named by argv[1] (after printing a line). */
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    printf("exec %s\n", argv[1]);
    fflush(stdout);
    execl(argv[1], argv[1], (char *)NULL);
    perror("execl");
    return 1;
}
