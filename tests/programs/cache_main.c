/* Prints what cache_lib.c's lib_value computes (linked against it). */
#include <stdio.h>

int lib_value(int n);

int main(void) {
    printf("value = %d\n", lib_value(1000));
    return 0;
}
