/* gdb front end, reverse execution: nested calls, a loop, recursion and a global written in
   several places, with no C library calls after main starts (gdb's own `record full` runs the
   same commands natively in tests/gdbserver.rs, for the expected lines). */
struct acc { int sum, count; };
int g;

static void note(struct acc *a, int v) {
    a->sum += v;
    a->count++;
}

int depth(int n) {
    if (n == 0)
        return 0;
    return 1 + depth(n - 1);
}

int mix(int x) {
    int y = x * 3;
    g += y;
    return y + depth(x);
}

int main(void) {
    struct acc a = {0, 0};
    for (int i = 0; i < 4; i++) {
        int m = mix(i);
        note(&a, m);
        g = g - 1;
    }
    g += a.sum;
    return g == 0 ? 1 : 0;
}
