/* Multi-process test: a producer (the parent) sends N messages to a consumer (its child)
 * over one pipe and waits for the consumer's acknowledgement of message k (over a second
 * pipe) before it sends message k+1. Each message is 8 bytes ("msg 001\n"), each ack 4
 * ("ack\n"). The consumer sums the message numbers; the producer reaps it with waitpid.
 * Usage: mp_acks [N] (default 5). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int consume(int in, int ack, int n)
{
    int sum = 0;
    for (int k = 1; k <= n; k++) {
        char msg[8];
        if (read(in, msg, sizeof msg) != sizeof msg) /* CONSUMER-READ */
            return 1;
        int got = atoi(msg + 4);
        sum += got; /* CONSUMER-GOT */
        if (write(ack, "ack\n", 4) != 4)
            return 1;
    }
    printf("consumer: sum=%d\n", sum);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int n = argc > 1 ? atoi(argv[1]) : 5;
    int data[2], acks[2];
    if (pipe(data) != 0 || pipe(acks) != 0)
        return 1;
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        close(data[1]);
        close(acks[0]);
        return consume(data[0], acks[1], n);
    }
    close(data[0]);
    close(acks[1]);
    for (int k = 1; k <= n; k++) {
        char msg[9];
        snprintf(msg, sizeof msg, "msg %03d\n", k);
        if (write(data[1], msg, 8) != 8) /* PRODUCER-SEND */
            return 1;
        char ack[4];
        if (read(acks[0], ack, sizeof ack) != sizeof ack) /* PRODUCER-ACK */
            return 1;
    }
    int status = 0;
    waitpid(child, &status, 0);
    printf("producer %d: sent %d, consumer %d exited %d\n", getpid(), n, child,
           WEXITSTATUS(status));
    return 0;
}
