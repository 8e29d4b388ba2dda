/* Makes syscalls with the stack pointer 0 (a program may: the kernel does not use the user
 * stack for a syscall), then prints what they returned. */
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static long saved;

static long raw3(long nr, long a, long b, long c) {
  long ret;
  __asm__ volatile(
      "mov %%rsp, %[saved]\n\t"
      "xor %%esp, %%esp\n\t"
      "syscall\n\t"
      "mov %[saved], %%rsp\n\t"
      : "=a"(ret), [saved] "=m"(saved)
      : "a"(nr), "D"(a), "S"(b), "d"(c)
      : "rcx", "r11", "memory");
  return ret;
}

int main(void) {
  static const char msg[] = "written from a zero stack\n";
  long w = raw3(SYS_write, 1, (long)msg, sizeof msg - 1);
  long p = raw3(SYS_getpid, 0, 0, 0);
  printf("write returned %ld, getpid matches %d\n", w, p == getpid());
  return 0;
}
