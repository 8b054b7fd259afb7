/* rt_order.c — test program for libpgokit_rt (built with -pg -mfentry).
 * It runs functions in a known order, prints what the runtime must record, then
 * uses threads and a fork:
 *   EXPECT_ORDER f1 f2 ...    exact first-execution order of the sequential phase
 *   EXPECT_SET f ...          functions first run concurrently by threads (any order)
 *   EXPECT_COUNT f N          exact entry counts (counting mode)
 *   ENTRY f HEX               the first 12 code bytes of f after the run
 *   CALLER_OFFSET counted N   where main's `call counted` points, relative to counted
 *   CHILD_PID n / CHILD_EXPECT f ...   the forked child's own profile
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINL __attribute__((noinline))
#define BODY __asm__ volatile("" ::: "memory")

int call_helper_b(int x);
static volatile int sink;

NOINL static int helper(int x) { BODY; return x + 7; }
NOINL void alpha(void) { BODY; sink += 1; }
NOINL void beta(void) { BODY; sink += helper(sink); }
NOINL static void gamma_fn(void) { BODY; sink += call_helper_b(3); }
/* Where did our caller's `call` point? Past our entry hook once the runtime
 * has redirected that call site (learning mode), at our start otherwise. */
static volatile long caller_offset;
NOINL void counted(void)
{
    BODY;
    const unsigned char *ret = __builtin_return_address(0);
    int rel;
    memcpy(&rel, ret - 4, 4);
    if (ret[-5] == 0xe8) caller_offset = (long)((const char *)ret + rel - (const char *)counted);
    sink++;
}
NOINL void t_work0(void) { BODY; sink++; }
NOINL void t_work1(void) { BODY; sink++; }
NOINL void t_work2(void) { BODY; sink++; }
NOINL void t_work3(void) { BODY; sink++; }
NOINL void child_only(void) { BODY; sink++; }
NOINL void after_fork(void) { BODY; sink++; }
NOINL void never_called(void) { BODY; sink++; }

#define THREADS 4
#define ITER 2500
static pthread_barrier_t barrier;

NOINL static void *thread_main(void *arg)
{
    long id = (long)arg;
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < ITER; i++) {
        switch ((i + id) % 4) {   /* threads hit the functions in different orders */
        case 0: t_work0(); t_work1(); t_work2(); t_work3(); break;
        case 1: t_work1(); t_work2(); t_work3(); t_work0(); break;
        case 2: t_work2(); t_work3(); t_work0(); t_work1(); break;
        default: t_work3(); t_work0(); t_work1(); t_work2(); break;
        }
    }
    return NULL;
}

static void print_entry(const char *name, const void *fn)
{
    const unsigned char *p = fn;
    printf("ENTRY %s ", name);
    for (int i = 0; i < 12; i++) printf("%02x", p[i]);
    printf("\n");
}

int main(int argc, char **argv)
{
    printf("EXPECT_ORDER main alpha beta rt_order.c:helper rt_order.c:gamma_fn call_helper_b rt_order_b.c:helper counted\n");
    alpha();
    beta();
    gamma_fn();
    for (int i = 0; i < 1000; i++) counted();
    printf("CALLER_OFFSET counted %ld\n", caller_offset);
    alpha();
    beta();
    if (argc > 1 && !strcmp(argv[1], "wait")) {   /* for signal / kill tests */
        printf("READY\n");
        fflush(stdout);
        for (;;) pause();
    }

    printf("EXPECT_SET rt_order.c:thread_main t_work0 t_work1 t_work2 t_work3\n");
    pthread_t th[THREADS];
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (long i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, thread_main, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    printf("EXPECT_COUNT main 1\nEXPECT_COUNT alpha 2\nEXPECT_COUNT beta 2\nEXPECT_COUNT counted 1000\n");
    printf("EXPECT_COUNT rt_order.c:helper 2\nEXPECT_COUNT rt_order_b.c:helper 1\nEXPECT_COUNT rt_order.c:thread_main %d\n", THREADS);
    for (int i = 0; i < 4; i++) printf("EXPECT_COUNT t_work%d %d\n", i, THREADS * ITER);
    fflush(stdout);

    pid_t pid = fork();
    if (pid == 0) {
        child_only();
        alpha();     /* patched by the parent in trace mode: not in the child's trace */
        exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("CHILD_PID %d\nCHILD_EXPECT_TRACE child_only\nCHILD_EXPECT_COUNT child_only 1\nCHILD_EXPECT_COUNT alpha 1\n", (int)pid);
    after_fork();
    printf("EXPECT_AFTER after_fork\n");
    print_entry("alpha", (const void *)alpha);
    print_entry("counted", (const void *)counted);
    print_entry("t_work0", (const void *)t_work0);
    print_entry("never_called", (const void *)never_called);
    if (argc > 1 && !strcmp(argv[1], "never")) never_called();
    return 0;
}
