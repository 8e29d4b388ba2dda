/* Installs a seccomp filter that allows only read, write and exit_group (anything else kills
 * the process), then reads a file it opened before and writes what it read. */
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ALLOW(nr) \
  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

int main(int argc, char **argv) {
  (void)argc;
  int fd = open(argv[0], O_RDONLY);
  if (fd < 0) return 1;
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      ALLOW(SYS_read),
      ALLOW(SYS_write),
      ALLOW(SYS_exit_group),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
  };
  struct sock_fprog prog = {.len = sizeof filter / sizeof filter[0], .filter = filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 2;
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) return 3;
  char buf[4];
  for (int i = 0; i < 3; i++) {
    char line[64];
    ssize_t n = read(fd, buf, sizeof buf);
    int len = snprintf(line, sizeof line, "read %zd: %02x %02x %02x %02x\n", n, buf[0] & 0xff,
                       buf[1] & 0xff, buf[2] & 0xff, buf[3] & 0xff);
    if (write(1, line, len) != len) return 4;
  }
  syscall(SYS_exit_group, 0);
  return 0;
}
