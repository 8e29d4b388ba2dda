/* Processes writing to the terminal at the same time: each line is one write(2), and the
 * lines of different processes interleave in whatever order the kernel took them. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  for (int p = 0; p < 4; p++) {
    if (fork() == 0) {
      for (int i = 0; i < 300; i++) {
        char line[64];
        int n = snprintf(line, sizeof line, "process %d line %d\n", p, i);
        if (write(1, line, n) != n) _exit(1);
      }
      _exit(0);
    }
  }
  for (int p = 0; p < 4; p++) wait(NULL);
  printf("all done\n");
  return 0;
}
