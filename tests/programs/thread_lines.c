/* Four threads print 50 lines each to stdout at the same time, with no lock between them:
 * the order in which the lines reach the terminal is the kernel's, and replay must show them
 * in that order. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *run(void *arg)
{
    long id = (long)arg;
    char line[64];
    for (int i = 0; i < 50; i++) {
        int n = snprintf(line, sizeof line, "thread %ld line %d\n", id, i);
        if (write(1, line, n) != n)
            return NULL;
        if (i % 7 == 0)
            usleep(100);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, run, (void *)i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("all done\n");
    return 0;
}
