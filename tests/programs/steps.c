/* A call chain for stepping, finish and backtraces. */
#include <stdio.h>

int square(int x) {
    int r = x * x;
    return r;
}

int sum_squares(int n) {
    int total = 0;
    for (int i = 1; i <= n; i++) {
        total += square(i);
    }
    return total;
}

int depth3(int v) { return sum_squares(v) + 1; }

int main(void) {
    int v = depth3(3);
    printf("v = %d\n", v);
    return v == 15 ? 0 : 1;
}
