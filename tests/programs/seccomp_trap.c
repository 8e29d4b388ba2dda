/* A seccomp filter that answers getppid with SIGSYS (SECCOMP_RET_TRAP): the handler sees
 * which syscall it was and sets the result the program then reads. */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static volatile int traps;

static void on_sigsys(int sig, siginfo_t *si, void *p)
{
    ucontext_t *ctx = p;
    (void)sig;
    traps++;
    /* The trapped call's result is what the handler leaves in rax. */
    ctx->uc_mcontext.gregs[REG_RAX] = 1000 + si->si_syscall;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSYS, &sa, NULL);
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return 1;
    for (int i = 0; i < 3; i++) {
        long r = syscall(SYS_getppid);
        printf("getppid answered %ld (trap %d)\n", r, traps);
    }
    return 0;
}
