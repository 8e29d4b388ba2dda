/* A traced syscall (mmap, through libc's syscall()) followed by calls the agent buffers
 * (writes to /dev/null), then a write to stdout: the recorded events right after each of
 * them need no execution (a batch for the agent, the output), for stepping by instruction
 * over the `syscall` and asking where the replay stands. */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    int null = open("/dev/null", O_WRONLY);
    long p = syscall(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (write(null, "x", 1) != 1 || write(null, "y", 1) != 1)
        return 1;
    if (write(1, "done\n", 5) != 5)
        return 2;
    return p == -1;
}
