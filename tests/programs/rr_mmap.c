/* Record/replay test: maps the file named by argv[1] (PROT_READ, MAP_PRIVATE), prints a
 * checksum of its content and its first line. With argv[2] = "unlink", the file is removed
 * between open and mmap (the mapping is of a deleted file). */
#include <string.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: rr_mmap FILE\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    if (argc > 2 && strcmp(argv[2], "unlink") == 0)
        unlink(argv[1]);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        perror(argv[1]);
        return 1;
    }
    const unsigned char *p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    close(fd);
    long size = st.st_size;
    unsigned long checksum = 0;
    for (long i = 0; i < size; i++)
        checksum = checksum * 131 + p[i];
    int line_len = 0;
    while (line_len < size && line_len < 100 && p[line_len] != '\n')
        line_len++;
    printf("first=%.*s\n", line_len, (const char *)p);
    printf("checksum=%lu\n", checksum); /* BREAK-HERE */
    printf("size=%ld\n", size);
    munmap((void *)p, st.st_size);
    return 0;
}
