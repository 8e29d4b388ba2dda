/* Reverse stepping: lines, calls, loops. */
int g;

int add(int a, int b) {
    int s = a + b;
    return s;
}

int twice(int x) {
    int y = add(x, x);
    return y;
}

int main(void) {
    int acc = 0;
    for (int i = 0; i < 3; i++) {
        acc = twice(i);
        g = acc + 1;
    }
    g = g * 2;
    return g == 10 ? 0 : 1;
}
