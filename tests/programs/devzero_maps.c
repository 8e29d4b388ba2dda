/* Mappings of /dev/zero: a private one (anonymous memory), and a shared one that a child
 * writes into for its parent to read; two shared mappings of /dev/zero are not connected. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int fd = open("/dev/zero", O_RDWR);
    if (fd < 0)
        return 1;
    char *priv = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    char *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    char *other = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    if (priv == MAP_FAILED || shared == MAP_FAILED || other == MAP_FAILED)
        return 1;
    printf("private starts with %d, shared with %d\n", priv[0], shared[0]);
    strcpy(priv + 4096, "private bytes");
    pid_t child = fork();
    if (child == 0) {
        strcpy(shared, "written by the child");
        _exit(0);
    }
    waitpid(child, NULL, 0);
    printf("private: %s\n", priv + 4096);
    printf("shared: %s\n", shared);
    printf("the other shared mapping: %d\n", other[0]);
    return 0;
}
