/* Record/replay test: effects on the outside world that a replay must not repeat. Writes a
 * random line to the file argv[1], removes the file argv[2], creates the directory argv[3]. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 4) {
        fprintf(stderr, "usage: rr_effects NEWFILE OLDFILE NEWDIR\n");
        return 2;
    }
    unsigned int value = 0;
    if (getrandom(&value, sizeof value, 0) != sizeof value)
        return 1;
    char line[64];
    int len = snprintf(line, sizeof line, "written %u\n", value);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL, 0644);
    int wrote = fd >= 0 ? (int)write(fd, line, len) : -1;
    close(fd);
    int removed = unlink(argv[2]);
    int made = mkdir(argv[3], 0755);
    printf("value=%u\n", value); /* BREAK-HERE */
    printf("results=%d,%d,%d\n", wrote, removed, made);
    return wrote == len && removed == 0 && made == 0 ? 0 : 1;
}
