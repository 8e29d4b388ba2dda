/* Record/replay test: clock_gettime (REALTIME, MONOTONIC), gettimeofday, time (all vDSO
 * functions natively). */
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct timespec rt, mono, mono2;
    struct timeval tv;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    gettimeofday(&tv, NULL);
    time_t now = time(NULL);
    /* Fifty more readings: the elapsed time differs from run to run. */
    for (int i = 0; i < 50; i++)
        clock_gettime(CLOCK_MONOTONIC, &mono2);
    long rt_sec = rt.tv_sec, rt_nsec = rt.tv_nsec;
    long mono_nsec = mono.tv_nsec;
    long usec = tv.tv_usec;
    long elapsed = (mono2.tv_sec - mono.tv_sec) * 1000000000L + (mono2.tv_nsec - mono.tv_nsec);
    long now_sec = (long)now;
    printf("rt_sec=%ld\n", rt_sec); /* BREAK-HERE */
    printf("rt_nsec=%ld\n", rt_nsec);
    printf("mono_nsec=%ld\n", mono_nsec);
    printf("usec=%ld\n", usec);
    printf("now_sec=%ld\n", now_sec);
    printf("elapsed=%ld\n", elapsed);
    printf("consistent=%d\n", now_sec >= rt_sec - 1 && now_sec <= rt_sec + 1 && elapsed >= 0);
    return 0;
}
