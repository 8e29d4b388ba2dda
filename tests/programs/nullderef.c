/* Dereferences a null pointer three calls deep. */
#include <stdio.h>
#include <unistd.h>

struct node {
    int value;
    struct node *next;
};

int last_value(struct node *n)
{
    while (n->next)
        n = n->next;
    return n->next->value;
}

int main(void)
{
    struct node b = {2, 0};
    struct node a = {1, &b};
    fprintf(stderr, "pid %d\n", (int)getpid());
    printf("before crash\n");
    fflush(stdout);
    int v = last_value(&a);
    printf("never printed %d\n", v);
    return 0;
}
