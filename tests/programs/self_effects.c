/* Syscalls whose effects on the caller follow from their arguments: process_vm_writev and
 * process_vm_readv into itself (stopping at an unmapped page), a local descriptor table entry
 * written then read back and used (lsl), a software perf counter read and queried by ioctl,
 * and the old bridge ioctl (SIOCGIFBR) listing bridges into an array. */
#define _GNU_SOURCE
#include <asm/ldt.h>
#include <linux/if_bridge.h>
#include <linux/perf_event.h>
#include <linux/sockios.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static void vm_calls(void) {
  long page = sysconf(_SC_PAGESIZE);
  unsigned char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(p + page, page);
  for (int i = 0; i < page; i++) p[i] = (unsigned char)(i * 7);
  /* From the first bytes to the page's last ones, the second iovec running off its end. */
  struct iovec from[2] = {{p, 3}, {p + 10, 4}};
  struct iovec to[2] = {{p + page - 8, 4}, {p + page - 2, 4}};
  ssize_t w = process_vm_writev(getpid(), from, 2, to, 2, 0);
  printf("process_vm_writev: %zd, tail:", w);
  for (int i = 8; i > 0; i--) printf(" %d", p[page - i]);
  printf("\n");
  struct iovec in[1] = {{p + 100, 5}};
  struct iovec src[1] = {{p + page - 5, 5}};
  ssize_t r = process_vm_readv(getpid(), in, 1, src, 1, 0);
  printf("process_vm_readv: %zd:", r);
  for (int i = 0; i < 5; i++) printf(" %d", p[100 + i]);
  printf("\n");
}

static void ldt(void) {
  struct user_desc d = {.entry_number = 1, .base_addr = 0, .limit = 0x2345,
                        .seg_32bit = 1, .contents = 2, .useable = 1};
  long set = syscall(SYS_modify_ldt, 0x11, &d, sizeof d);
  unsigned char table[64];
  memset(table, 0xee, sizeof table);
  long got = syscall(SYS_modify_ldt, 0, table, sizeof table);
  uint32_t selector = (1 << 3) | 4 | 3, limit = 0, valid = 0;
  __asm__("lsl %[sel], %[lim]\n\tjnz 1f\n\tmovl $1, %[ok]\n1:"
          : [lim] "=r"(limit), [ok] "+rm"(valid)
          : [sel] "r"(selector));
  /* Entry 1's first word holds the limit's low 16 bits. */
  printf("modify_ldt: set %ld, read %ld, entry 1 limit word %#x, lsl %s %#x\n", set, got,
         table[8] | table[9] << 8, valid ? "valid" : "invalid", limit);
}

static void perf(void) {
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_DUMMY;
  a.disabled = 1;
  int fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
  if (fd < 0) {
    printf("perf_event_open: unavailable\n");
    return;
  }
  int ok = ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) == 0 && ioctl(fd, PERF_EVENT_IOC_RESET, 0) == 0 &&
           ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) == 0;
  uint64_t id = 0, count = 99;
  int idr = ioctl(fd, PERF_EVENT_IOC_ID, &id);
  ssize_t n = read(fd, &count, sizeof count);
  printf("perf_event_open: ioctls %s, id %s, read %zd bytes: %llu\n", ok ? "ok" : "failed",
         idr == 0 && id != 0 ? "set" : "unset", n, (unsigned long long)count);
  close(fd);
  /* The descriptor number is free again. */
  int again = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
  printf("perf_event_open again: %s\n", again == fd ? "same descriptor" : "another descriptor");
  close(again);
}

static void bridges(void) {
  int s = socket(AF_INET, SOCK_DGRAM, 0);
  unsigned long args[3] = {BRCTL_GET_VERSION, 0, 0};
  int version = ioctl(s, SIOCGIFBR, args);
  int list[16];
  memset(list, 0xff, sizeof list);
  args[0] = BRCTL_GET_BRIDGES;
  args[1] = (unsigned long)list;
  args[2] = 16;
  int n = ioctl(s, SIOCGIFBR, args);
  printf("SIOCGIFBR: version %d, %d bridges, first slots %d %d\n", version, n, list[0],
         list[1]);
  close(s);
}

int main(void) {
  vm_calls();
  ldt();
  perf();
  bridges();
  return 0;
}
