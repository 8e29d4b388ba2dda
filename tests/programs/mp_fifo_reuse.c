/* Multi-process test: a descriptor number that names a regular file, then a FIFO. The
 * parent reads its own program file through descriptor N, closes it, opens a FIFO (which
 * gets the same number N) and writes "hello" to it; its child reads the FIFO. With the
 * agent, the parent's read, close, open and write are calls of one batch: only the write
 * is a message. Usage: mp_fifo_reuse FIFO-PATH */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2 || mkfifo(argv[1], 0600) != 0)
        return 1;
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        int in = open(argv[1], O_RDONLY);
        char buf[8] = {0};
        ssize_t n = read(in, buf, 5);
        printf("child read %zd: %s\n", n, buf);
        return n == 5 ? 0 : 1;
    }
    int f = open(argv[0], O_RDONLY);
    char head[16];
    ssize_t got = read(f, head, sizeof head);
    close(f);
    int out = open(argv[1], O_WRONLY);
    ssize_t put = write(out, "hello", 5);
    int status = 0;
    waitpid(child, &status, 0);
    printf("parent: file %zd bytes, descriptors %d then %d, wrote %zd\n", got, f, out, put);
    unlink(argv[1]);
    return 0;
}
