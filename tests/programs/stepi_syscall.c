/* Writes through libc, for stepping by instruction over their `syscall` (which the replay's
 * agent serves through a stub of its own). */
#include <unistd.h>

int main(void)
{
    for (int i = 0; i < 3; i++)
        if (write(1, "hi\n", 3) != 3)
            return 1;
    return 0;
}
