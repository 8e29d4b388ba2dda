/* Requests the recorder has no table entry for: ones the kernel refuses (an ioctl, an fcntl
 * command, a futex operation, a syscall number no kernel has below 1024) are recorded as
 * their errors; ioctls that say in their number what they write (_IOR) are recorded from
 * that; FS_IOC_FIEMAP writes a variable array of extents. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    char path[] = "/tmp/hindsight-unknown-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    unlink(path);
    long r = ioctl(fd, 0x2400, 0); /* no such request */
    printf("ioctl 0x2400: %ld %s\n", r, r < 0 ? strerror(errno) : "");
    r = fcntl(fd, 9999);
    printf("fcntl 9999: %ld %s\n", r, r < 0 ? strerror(errno) : "");
    int word = 0;
    r = syscall(SYS_futex, &word, 0x70, 0, NULL, NULL, 0);
    printf("futex op 0x70: %ld %s\n", r, r < 0 ? strerror(errno) : "");
    r = syscall(1008, 1, 2, 3);
    printf("syscall 1008: %ld %s\n", r, r < 0 ? strerror(errno) : "");
    /* _IOR of a tape drive on a file: refused, nothing written. */
    char buf[64];
    memset(buf, 'g', sizeof buf);
    r = ioctl(fd, 0x80306d02, buf);
    printf("MTIOCGET: %ld %s guard=%c\n", r, r < 0 ? strerror(errno) : "", buf[0]);
    /* _IOR that a regular file answers on most file systems. */
    struct fsxattr xa;
    memset(&xa, 0x5a, sizeof xa);
    r = ioctl(fd, FS_IOC_FSGETXATTR, &xa);
    if (r == 0)
        printf("fsxattr: xflags=%#x extsize=%u nextents=%u projid=%u\n", xa.fsx_xflags,
               xa.fsx_extsize, xa.fsx_nextents, xa.fsx_projid);
    else
        printf("fsxattr: %s\n", strerror(errno));
    /* FIEMAP: the extents of a written file. */
    char data[8192];
    memset(data, 'x', sizeof data);
    if (write(fd, data, sizeof data) != sizeof data || fsync(fd) != 0)
        return 1;
    union {
        struct fiemap fm;
        char bytes[sizeof(struct fiemap) + 8 * sizeof(struct fiemap_extent)];
    } u;
    memset(&u, 0, sizeof u);
    u.fm.fm_length = FIEMAP_MAX_OFFSET;
    u.fm.fm_extent_count = 8;
    r = ioctl(fd, FS_IOC_FIEMAP, &u.fm);
    if (r == 0) {
        printf("fiemap: %u extents\n", u.fm.fm_mapped_extents);
        for (unsigned i = 0; i < u.fm.fm_mapped_extents && i < 8; i++)
            printf("  extent %u: logical=%llu length=%llu flags=%#x\n", i,
                   (unsigned long long)u.fm.fm_extents[i].fe_logical,
                   (unsigned long long)u.fm.fm_extents[i].fe_length,
                   u.fm.fm_extents[i].fe_flags);
    } else {
        printf("fiemap: %s\n", strerror(errno));
    }
    close(fd);
    return 0;
}
