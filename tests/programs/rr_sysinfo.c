/* Record/replay test: what the system says about itself (uptime, memory, usage, ticks, the
 * current CPU, /proc), all different from run to run. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct utsname u;
    uname(&u);
    struct sysinfo si;
    sysinfo(&si);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    struct tms tm;
    long ticks = (long)times(&tm);
    int cpu = sched_getcpu();
    int entries = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        entries++;
    if (d)
        closedir(d);
    char stat[1024] = "";
    int fd = open("/proc/self/stat", O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, stat, sizeof stat - 1) : -1;
    if (n > 0)
        stat[n] = 0;
    close(fd);
    /* Field 22 (starttime), counted after the ')' that ends the command name. */
    char *p = strrchr(stat, ')');
    long starttime = 0;
    for (int field = 2; p && *p; p++) {
        if (*p == ' ' && ++field == 22) {
            starttime = atol(p + 1);
            break;
        }
    }
    char exe[256];
    ssize_t exe_len = readlink("/proc/self/exe", exe, sizeof exe);
    long uptime = si.uptime;
    unsigned long freeram = si.freeram;
    long minflt = ru.ru_minflt;
    printf("ticks=%ld\n", ticks); /* BREAK-HERE */
    printf("starttime=%ld\n", starttime);
    printf("freeram=%lu\n", freeram);
    printf("uptime=%ld\n", uptime);
    printf("entries=%d\n", entries);
    printf("cpu=%d\n", cpu);
    printf("minflt=%ld\n", minflt);
    printf("exe_len=%ld\n", (long)exe_len);
    printf("sysname=%s\n", u.sysname);
    return 0;
}
