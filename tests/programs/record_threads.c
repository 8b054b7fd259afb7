/* record_threads.c — two worker threads and a fork()ed child, for the
 * recorder's per-thread state and its fork rule (the child stops recording). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static long spin(long n, long salt)
{
    long acc = salt;
    for (long i = 0; i < n; i++)
        acc = acc * 31 + (i % 7 == 0 ? i : -i);
    return acc;
}

static void *worker(void *arg)
{
    long *r = arg;
    *r = spin(2000000, *r);
    return NULL;
}

int main(void)
{
    long r[2] = {1, 2};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, &r[i]);
    pid_t pid = fork();
    if (pid == 0) {
        /* the child runs long enough to take samples if it recorded */
        printf("child %ld\n", spin(3000000, 3) & 0xff);
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("parent %ld\n", (r[0] ^ r[1]) & 0xff);
    return 0;
}
