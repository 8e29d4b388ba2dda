/* A program that overwrites hindsight's agent: with "write" it fills the agent's writable
 * memory (found in /proc/self/maps at the agent's fixed address) with junk, with "map" it
 * maps its own memory over the agent. Then it writes a line. A recording must stop with a
 * clear error, never record (or replay) the damage as if nothing happened. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define AGENT_LO 0x7a0000000000UL
#define AGENT_HI 0x7a0000800000UL

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "write";
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long lo = 0, hi = 0;
    while (maps && fgets(line, sizeof line, maps)) {
        unsigned long a, b;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s", &a, &b, perms) == 3 && a >= AGENT_LO && a < AGENT_HI &&
            perms[1] == 'w') {
            lo = a;
            hi = b;
            break;
        }
    }
    if (maps)
        fclose(maps);
    if (lo == 0) {
        puts("no agent");
        return 0;
    }
    if (strcmp(how, "map") == 0)
        mmap((void *)lo, hi - lo, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    else
        memset((void *)lo, 0x5a, hi - lo);
    puts("scribbled");
    return 0;
}
