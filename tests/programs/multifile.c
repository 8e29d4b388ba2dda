/* Two compile units: multifile.c and util.c (a static, a function-static and a shadowing local). */
#include <stdio.h>
int helper(const char *s);
char names[2][8] = {"ab", "cdef"};
float weights[3] = {0.5f, 1.25f, -2.0f};
unsigned char bytes[4] = {0, 127, 128, 255};
enum level { LOW = -1, MID = 0, HIGH = 1 };
int main(int argc, char **argv) {
    enum level lv = LOW;
    char *msgs[] = {"one", "two"};
    int total = 0;
    for (int i = 0; i < 2; i++)
        total += helper(msgs[i]);
    printf("%d %d %s\n", total, lv, argv[0]);
    return 0;
}
