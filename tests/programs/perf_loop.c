/* perf_loop.c — a small CPU-bound program for perf.data tests: a few
 * functions calling each other (frame pointers kept), a thread and a fork so
 * recordings contain FORK/EXIT/COMM records. Argument: work units. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long leaf(unsigned long x)
{
    unsigned long s = 0;
    for (unsigned long i = 0; i < 2000; i++)
        s += (x ^ i) * 2654435761u >> 7;
    return s;
}

__attribute__((noinline)) static unsigned long mid(unsigned long x)
{
    unsigned long s = 0;
    for (int i = 0; i < 8; i++)
        s += (i & 1) ? leaf(x + (unsigned long)i) : leaf(x * 3 + (unsigned long)i);
    return s;
}

__attribute__((noinline)) static void work(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += mid(i);
}

static void *thread_main(void *arg)
{
    work((unsigned long)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
    pthread_t t;
    pthread_create(&t, NULL, thread_main, (void *)(n / 2));
    pid_t child = fork();
    if (child == 0) {
        work(n / 2);
        _exit(0);
    }
    work(n);
    pthread_join(t, NULL);
    if (child > 0)
        waitpid(child, NULL, 0);
    printf("%lu\n", sink);
    return 0;
}
