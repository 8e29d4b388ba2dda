/* The program the Debug Adapter Protocol tests drive (tests/dap/): a struct with an array
 * of structs to expand, a global written four times (data breakpoints, reverse-continue
 * to the last write), lines to step forward and back over, output, and with an argument a
 * long CPU-bound phase with a syscall about every millisecond (pause; 3000 recorded events,
 * so that recording it stays quick), an endless one (pause, live), a crash (signals as stops)
 * or two worker threads. Lines the tests look for carry a `// @name` marker. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct point {
    int x;
    int y;
};

struct shape {
    const char *name;
    struct point corners[3];
    int sides;
};

int counter;
static int results[2];

int area(struct shape *s) {
    int a = 0;
    for (int i = 0; i < s->sides; i++) {
        a += s->corners[i].x * s->corners[i].y; // @area-loop
    }
    return a;
}

void bump(int by) {
    counter += by; // @bump
}

static int work(int id) {
    return id * 100 + 7; // @work
}

static void *worker(void *arg) {
    long id = (long)arg;
    results[id] = work((int)id);
    return NULL;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Runs on the CPU for `n` iterations, without a syscall. */
static void busy(long n) {
    volatile unsigned long x = 0;
    for (long i = 0; i < n; i++) {
        x++;
    }
}

/* Runs on the CPU for `ms` milliseconds (reading the clock all the while). */
static void spin(double ms) {
    volatile unsigned long n = 0;
    double end = now_ms() + ms;
    while (now_ms() < end) {
        n++; // @spin
    }
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    struct shape tri = {"triangle", {{1, 2}, {3, 4}, {5, 6}}, 3};
    int total = 0;
    bump(1);
    bump(2); // @bump2
    total = area(&tri); // @call-area
    bump(3); // @bump3
    printf("total %d counter %d\n", total, counter); // @print
    fflush(stdout);
    if (strcmp(mode, "long") == 0) {
        for (int i = 0; i < 3000; i++) {
            busy(1000000);
            getppid();
        }
    } else if (strcmp(mode, "spin") == 0) {
        spin(600000);
    } else if (strcmp(mode, "crash") == 0) {
        *(volatile int *)(long)total = 1; // @crash
    } else if (strcmp(mode, "threads") == 0) {
        pthread_t t[2];
        for (long i = 0; i < 2; i++) {
            pthread_create(&t[i], NULL, worker, (void *)i);
            pthread_join(t[i], NULL);
        }
        printf("threads %d %d\n", results[0], results[1]);
    }
    bump(4); // @bump4
    printf("done %d\n", counter);
    return 0;
}
