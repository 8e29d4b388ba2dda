/* main() leaves with pthread_exit while a worker goes on: the leader lingers as a zombie. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
int work(int x) { return x * 2; }
void *worker(void *a) { usleep(20000); for (int i = 0; i < 3; i++) printf("w %d\n", work(i)); return 0; }
int main(void) { pthread_t t; pthread_create(&t, 0, worker, 0); pthread_exit(0); }
