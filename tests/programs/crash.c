/* Writes through a null pointer. */
#include <stdio.h>

int main(void) {
    int *p = NULL;
    puts("about to crash");
    fflush(stdout);
    *p = 1;
    return 0;
}
