/* Reverse execution compared with gdb's own `record full` (crates/hindsight/tests/
   differential.rs): calls, a one-line function, recursion, loops whose condition shares a
   line with their step, and a global written in several places (the watched one), with no C
   library calls after main starts (gdb's history covers main only). */
int g;
int table[8];

static int leaf(int v) { return v * 2 + 1; }

int fib(int n) {
    if (n < 2)
        return n;
    return fib(n - 1) + fib(n - 2);
}

void bump(int k) {
    g += k;
    if (g > 50)
        g -= 37;
}

int work(int i) {
    int s = leaf(i);
    for (int j = 0; j < i % 3; j++)
        s += leaf(j);
    bump(s);
    return s + fib(i % 5);
}

int main(void) {
    int total = 0;
    for (int i = 0; i < 12; i++) {
        total += work(i);
        table[i % 8] = total;
        if (i % 4 == 3) g = g / 2;
    }
    return total == 0;
} /* the end of gdb's history */
