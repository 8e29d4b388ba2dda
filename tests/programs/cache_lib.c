/* A shared library whose code the tests change in place (-DVARIANT=2 adds a second loop):
 * the patched-code cache must plan the changed file again. */
int lib_value(int n) {
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i * 3 + 1;
#if VARIANT == 2
    for (int i = 0; i < n; i++)
        if (i % 3 == 0)
            s ^= i << 2;
#endif
    return s;
}
