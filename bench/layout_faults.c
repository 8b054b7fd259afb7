/* layout_faults — start-up page faults of a program, warm or from a cold page
 * cache: before each run the binary's pages are dropped from the cache with
 * posix_fadvise(POSIX_FADV_DONTNEED) (no root needed; pages mapped by a
 * running process are not dropped), then the child's rusage is read.
 * usage: layout_faults [--cold] RUNS BINARY [ARGS...]
 * prints: minflt_avg majflt_avg minflt_min majflt_min wall_ms_avg resident_KiB
 * (resident_KiB: the binary's pages in the page cache after the last run, i.e.
 * what a cold start read from disk, readahead included; mincore). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Dirty pages cannot be dropped: write them back first (a freshly linked
 * binary is dirty). */
static int evict(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    fdatasync(fd);
    int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    return rc;
}

static long resident_kib(const char *path)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return -1;
    long pg = sysconf(_SC_PAGESIZE);
    size_t n = ((size_t)st.st_size + (size_t)pg - 1) / (size_t)pg;
    unsigned char *v = malloc(n);
    long res = -1;
    if (v && mincore(m, (size_t)st.st_size, v) == 0) {
        res = 0;
        for (size_t i = 0; i < n; i++)
            res += v[i] & 1;
        res = res * (pg / 1024);
    }
    free(v);
    munmap(m, (size_t)st.st_size);
    return res;
}

int main(int argc, char **argv)
{
    int a = 1, cold = 0;
    if (a < argc && !strcmp(argv[a], "--cold")) {
        cold = 1;
        a++;
    }
    if (argc - a < 2) {
        fprintf(stderr, "usage: %s [--cold] RUNS BINARY [ARGS...]\n", argv[0]);
        return 2;
    }
    int runs = atoi(argv[a]);
    char **cmd = argv + a + 1;
    double smin = 0, smaj = 0, swall = 0;
    long mmin = -1, mmaj = -1;
    for (int r = 0; r < runs; r++) {
        if (cold && evict(cmd[0]) != 0) {
            perror(cmd[0]);
            return 1;
        }
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        pid_t pid = fork();
        if (pid == 0) {
            int devnull = open("/dev/null", O_WRONLY);
            if (devnull >= 0)
                dup2(devnull, 1);
            execv(cmd[0], cmd);
            _exit(127);
        }
        int st;
        struct rusage ru;
        if (pid < 0 || wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "%s: run failed\n", cmd[0]);
            return 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        smin += ru.ru_minflt;
        smaj += ru.ru_majflt;
        swall += (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
        if (mmin < 0 || ru.ru_minflt < mmin)
            mmin = ru.ru_minflt;
        if (mmaj < 0 || ru.ru_majflt < mmaj)
            mmaj = ru.ru_majflt;
    }
    printf("%.1f %.1f %ld %ld %.2f %ld\n", smin / runs, smaj / runs, mmin, mmaj, swall / runs,
           resident_kib(cmd[0]));
    return 0;
}
