/* rt_stress.c — many functions first entered concurrently by many threads,
 * in different orders: every function must be recorded exactly once, every
 * hook patched without tearing (the program would crash), and in counting
 * mode every entry counted. Prints "EXPECT_EACH <count>" for counting mode. */
#include <pthread.h>
#include <stdio.h>

#define N 512
#define THREADS 8
#define ROUNDS 40
#define LEARN 16   /* the runtime's default PGOKIT_RT_LEARN_CALLS */

static volatile unsigned sink;
#define F(i) __attribute__((noinline)) void f##i(void) { sink += i; }
#define F8(i) F(i##0) F(i##1) F(i##2) F(i##3) F(i##4) F(i##5) F(i##6) F(i##7)
#define F64(i) F8(i##0) F8(i##1) F8(i##2) F8(i##3) F8(i##4) F8(i##5) F8(i##6) F8(i##7)
F64(1) F64(2) F64(3) F64(4) F64(5) F64(6) F64(7) F64(10)
#define P(i) f##i,
#define P8(i) P(i##0) P(i##1) P(i##2) P(i##3) P(i##4) P(i##5) P(i##6) P(i##7)
#define P64(i) P8(i##0) P8(i##1) P8(i##2) P8(i##3) P8(i##4) P8(i##5) P8(i##6) P8(i##7)
static void (*const table[N])(void) = {P64(1) P64(2) P64(3) P64(4) P64(5) P64(6) P64(7) P64(10)};

static pthread_barrier_t barrier;

__attribute__((noinline)) static void *worker(void *arg)
{
    unsigned t = (unsigned)(long)arg, step = 2 * t + 1;   /* odd: a permutation of 0..N-1 */
    pthread_barrier_wait(&barrier);
    for (int r = 0; r < ROUNDS; r++)
        for (unsigned i = 0; i < N; i++) table[(i * step + t * 37) % N]();
    return NULL;
}

int main(void)
{
    pthread_t th[THREADS];
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (long i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    /* Patching takes a try-lock and is retried on a later entry: on a loaded
     * machine a lock holder can be descheduled while the other threads run
     * every remaining entry of a function. A single-threaded tail of LEARN
     * rounds makes "entered LEARN times, hook removed" hold whatever the
     * scheduler did. */
    for (int r = 0; r < LEARN; r++)
        for (unsigned i = 0; i < N; i++) table[i]();
    printf("EXPECT_FUNCS %d\nEXPECT_EACH %d\nENTRY f100 ", N, THREADS * ROUNDS + LEARN);
    for (int i = 0; i < 12; i++) printf("%02x", ((const unsigned char *)(void *)f100)[i]);
    printf("\n");
    return 0;
}
