/* What a program asks about itself that the recorder changes for its own needs (rdtsc made to
 * fault, a seccomp filter): it sees what it would see without hindsight. */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <x86intrin.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int tsc = -1;
    prctl(PR_GET_TSC, &tsc);
    printf("tsc mode %d, seccomp mode %d\n", tsc, prctl(PR_GET_SECCOMP));
    printf("set tsc: %d\n", prctl(PR_SET_TSC, PR_TSC_ENABLE));
    tsc = -1;
    prctl(PR_GET_TSC, &tsc);
    unsigned long long a = __rdtsc(), b = __rdtsc();
    printf("tsc mode %d, rdtsc goes forward: %d\n", tsc, b > a);
    /* A filter of its own, that allows everything: now it is in filter mode. */
    struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {1, &allow};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    printf("own filter: %d\n", prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog));
    printf("seccomp mode %d\n", prctl(PR_GET_SECCOMP));
    return 0;
}
