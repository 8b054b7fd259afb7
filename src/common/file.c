/* file.c — whole-file read-only views and atomically committed outputs. */
#include "common/pk_common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <limits.h>
#include <linux/magic.h>
#include <sys/random.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void pk_file_release_pages(const pk_mapped_file *f)
{
    if (f->is_mmap && f->size)
        (void)madvise((void *)f->data, f->size, MADV_DONTNEED);
}

static int file_map(pk_mapped_file *f, const char *path, bool regular_only, pk_err *err)
{
    memset(f, 0, sizeof *f);
    /* O_NONBLOCK: opening a FIFO would wait for a writer */
    int fd = open(path, O_RDONLY | O_CLOEXEC | (regular_only ? O_NONBLOCK : 0));
    if (fd < 0)
        return pk_err_errno(err, "%s: cannot open", path);
    struct stat st;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return pk_err_errno(err, "%s: cannot stat", path);
    }
    if (regular_only && !S_ISREG(st.st_mode)) {
        close(fd);
        return pk_err_set(err, "%s: offset 0: not a regular file (a device, pipe or directory)", path);
    }
    f->path = strdup(path);
    if (!f->path) {
        close(fd);
        return pk_err_set(err, "%s: out of memory", path);
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        close(fd);
        if (p == MAP_FAILED) {
            free(f->path);
            f->path = NULL;
            return pk_err_errno(err, "%s: cannot mmap", path);
        }
        f->data = p;
        f->size = (size_t)st.st_size;
        f->is_mmap = 1;
        return 0;
    }
    /* Pipes, character devices, empty files: read into memory. */
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(buf);
            close(fd);
            free(f->path);
            f->path = NULL;
            errno = e;
            return pk_err_errno(err, "%s: read failed", path);
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    if (!buf) {
        free(f->path);
        f->path = NULL;
        return pk_err_set(err, "%s: out of memory", path);
    }
    f->data = buf;
    f->size = len;
    return 0;
}

int pk_file_borrow(pk_mapped_file *f, const void *data, size_t size, const char *name, pk_err *err)
{
    memset(f, 0, sizeof *f);
    f->path = strdup(name);
    if (!f->path)
        return pk_err_set(err, "%s: out of memory", name);
    f->data = data;
    f->size = size;
    f->is_borrowed = 1;
    return 0;
}

int pk_file_map(pk_mapped_file *f, const char *path, pk_err *err)
{
    return file_map(f, path, false, err);
}

int pk_file_map_regular(pk_mapped_file *f, const char *path, pk_err *err)
{
    return file_map(f, path, true, err);
}

void pk_file_unmap(pk_mapped_file *f)
{
    if (f->data && !f->is_borrowed) {
        if (f->is_mmap)
            munmap((void *)f->data, f->size);
        else
            free((void *)f->data);
    }
    free(f->path);
    memset(f, 0, sizeof *f);
}

/* The temporaries of outputs not yet committed or aborted, so that a
 * signal handler can remove them (pk_out_remove_temporaries). A fixed table
 * of pointers, because a handler can neither lock nor allocate; a slot is
 * claimed and released with atomic exchanges. More live outputs than slots
 * still work: only their clean-up on a signal is lost. */
#define LIVE_TEMPORARIES 32
static char *live_temporaries[LIVE_TEMPORARIES];
/* Directories of temporaries (record's session directory): their entries
 * and themselves go too. */
#define LIVE_DIRECTORIES 4
static char *live_directories[LIVE_DIRECTORIES];

static void track(char **table, size_t n, char *path)
{
    for (size_t i = 0; i < n; i++) {
        char *expected = NULL;
        if (__atomic_compare_exchange_n(&table[i], &expected, path, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            return;
    }
}

static void untrack(char **table, size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++) {
        char *expected = (char *)path;
        if (__atomic_compare_exchange_n(&table[i], &expected, NULL, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            return;
    }
}

void pk_out_track_directory(char *dir)
{
    track(live_directories, LIVE_DIRECTORIES, dir);
}

void pk_out_untrack_directory(const char *dir)
{
    untrack(live_directories, LIVE_DIRECTORIES, dir);
}

/* The entries of dir (one level) and dir itself, with system calls only:
 * getdents64 rather than readdir, which may allocate. */
static void remove_directory(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[4096] __attribute__((aligned(8)));
    for (int rounds = 0; rounds < 1024; rounds++) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (long off = 0; off < n;) {
            const char *name = buf + off + 19; /* d_ino 8, d_off 8, d_reclen 2, d_type 1 */
            unsigned short reclen;
            memcpy(&reclen, buf + off + 16, sizeof reclen);
            if (!(name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]))))
                unlinkat(fd, name, 0);
            off += reclen;
        }
    }
    close(fd);
    rmdir(dir);
}

void pk_out_track_temporary(char *tmp_path)
{
    track(live_temporaries, LIVE_TEMPORARIES, tmp_path);
}

void pk_out_untrack_temporary(const char *tmp_path)
{
    untrack(live_temporaries, LIVE_TEMPORARIES, tmp_path);
}

void pk_out_remove_temporaries(void)
{
    for (size_t i = 0; i < LIVE_TEMPORARIES; i++) {
        char *p = __atomic_exchange_n(&live_temporaries[i], NULL, __ATOMIC_SEQ_CST);
        if (p)
            unlink(p);
    }
    for (size_t i = 0; i < LIVE_DIRECTORIES; i++) {
        char *d = __atomic_exchange_n(&live_directories[i], NULL, __ATOMIC_SEQ_CST);
        if (d)
            remove_directory(d);
    }
}

int pk_out_create_temporary(const char *path, char **tmp_path, pk_err *err)
{
    *tmp_path = NULL;
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp)
        return pk_err_set(err, "%s: out of memory", path);
    /* Beside the target (rename stays within one file system), under a name
     * nobody can guess, created only if nothing is there: O_EXCL also
     * refuses a symlink planted under that name, O_NOFOLLOW says so twice. */
    for (int attempt = 0; attempt < 64; attempt++) {
        uint64_t r;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) {
            /* no entropy source: the clock and the pid still differ per call */
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            r = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^ (uint64_t)attempt;
        }
        snprintf(tmp, n, "%s.tmp.%012llx", path, (unsigned long long)(r & 0xffffffffffffull));
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) {
            *tmp_path = tmp;
            return fd;
        }
        if (errno != EEXIST)
            break;
    }
    /* the user's path: the temporary is an implementation detail (a missing
     * or read-only directory fails the same for both) */
    pk_err_errno(err, "%s: cannot create", path);
    free(tmp);
    return -1;
}

int pk_out_open(pk_out_file *o, const char *path, pk_err *err)
{
    o->fd = -1;
    o->written = 0;
    o->failed = 0;
    o->direct = 0;
    o->buf_len = 0;
    o->tmp_path = NULL;
    o->path = strdup(path);
    if (!o->path)
        return pk_err_set(err, "%s: out of memory", path);
    /* A device or a FIFO (/dev/null, /dev/stdout, a pipe) is written
     * directly: renaming a temporary over it would replace the device. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        o->fd = open(path, O_WRONLY | O_CLOEXEC);
        if (o->fd < 0) {
            pk_err_errno(err, "%s: cannot open", path);
            free(o->path);
            o->path = NULL;
            return -1;
        }
        o->direct = 1;
        return 0;
    }
    o->fd = pk_out_create_temporary(path, &o->tmp_path, err);
    if (o->fd < 0) {
        free(o->path);
        o->path = NULL;
        return -1;
    }
    pk_out_track_temporary(o->tmp_path);
    return 0;
}

static int out_flush(pk_out_file *o, pk_err *err)
{
    size_t off = 0;
    while (off < o->buf_len) {
        ssize_t n = write(o->fd, o->buf + off, o->buf_len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            o->failed = 1;
            return pk_err_errno(err, "%s: write failed", o->path);
        }
        off += (size_t)n;
    }
    o->buf_len = 0;
    return 0;
}

int pk_out_write(pk_out_file *o, const void *data, size_t len, pk_err *err)
{
    if (o->failed)
        return pk_err_set(err, "%s: an earlier write failed", o->path);
    const uint8_t *p = data;
    o->written += len;
    while (len) {
        size_t room = sizeof o->buf - o->buf_len;
        if (room == 0) {
            if (out_flush(o, err))
                return -1;
            continue;
        }
        size_t n = len < room ? len : room;
        memcpy(o->buf + o->buf_len, p, n);
        o->buf_len += n;
        p += n;
        len -= n;
    }
    return 0;
}

int pk_out_printf(pk_out_file *o, pk_err *err, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return pk_err_set(err, "%s: formatting failed", o->path);
    if ((size_t)n < sizeof small)
        return pk_out_write(o, small, (size_t)n, err);
    char *big = malloc((size_t)n + 1);
    if (!big)
        return pk_err_set(err, "%s: out of memory", o->path);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int rc = pk_out_write(o, big, (size_t)n, err);
    free(big);
    return rc;
}

int pk_out_pwrite(pk_out_file *o, const void *data, size_t len, uint64_t offset, pk_err *err)
{
    if (out_flush(o, err))
        return -1;
    if (o->direct) /* a pipe cannot be patched; /dev/null need not be */
        return pk_err_set(err, "%s: cannot patch bytes already written to a device or pipe", o->path);
    if (offset + len > o->written)
        return pk_err_set(err, "%s: patch at %llu beyond end", o->path, (unsigned long long)offset);
    if (pwrite(o->fd, data, len, (off_t)offset) != (ssize_t)len) {
        o->failed = 1;
        return pk_err_errno(err, "%s: write failed", o->path);
    }
    return 0;
}

int pk_out_commit(pk_out_file *o, pk_err *err)
{
    if (o->failed) {
        pk_err_set(err, "%s: not written: an earlier write failed", o->path);
        pk_out_abort(o);
        return -1;
    }
    if (out_flush(o, err)) {
        pk_out_abort(o);
        return -1;
    }
    if (close(o->fd) < 0) {
        o->fd = -1;
        pk_err_errno(err, "%s: close failed", o->path);
        pk_out_abort(o);
        return -1;
    }
    o->fd = -1;
    if (!o->direct && rename(o->tmp_path, o->path) < 0) {
        pk_err_errno(err, "%s: cannot replace it", o->path);
        pk_out_abort(o);
        return -1;
    }
    if (o->tmp_path)
        pk_out_untrack_temporary(o->tmp_path);
    free(o->path);
    free(o->tmp_path);
    o->path = o->tmp_path = NULL;
    return 0;
}

void pk_out_abort(pk_out_file *o)
{
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    if (o->tmp_path && !o->direct) {
        unlink(o->tmp_path);
        pk_out_untrack_temporary(o->tmp_path);
    }
    free(o->path);
    free(o->tmp_path);
    o->path = o->tmp_path = NULL;
}

static int stat_named(const char *path, struct stat *st)
{
    return !strcmp(path, "-") ? fstat(0, st) : stat(path, st);
}

bool pk_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat_named(a, &sa) == 0 && stat_named(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Whether `real` (a resolved absolute path) lies below `root`, through no
 * hidden directory or file (".ssh", ".git", ".env"): the compilation
 * directory comes from the same untrusted DWARF, and may be a home
 * directory; sources do not live in dot-directories. */
enum { OUTSIDE, INSIDE, HIDDEN };
static int path_under(const char *real, const char *root)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    if (n <= 1) /* "/" (or empty) would admit everything */
        return OUTSIDE;
    if (strncmp(real, root, n) || real[n] != '/')
        return OUTSIDE;
    return strstr(real + n, "/.") ? HIDDEN : INSIDE;
}

int pk_file_map_confined(pk_mapped_file *f, const char *path, const char *const *roots, size_t nroots,
                         uint64_t max_size, pk_err *err)
{
    memset(f, 0, sizeof *f);
    /* O_NONBLOCK: a FIFO opens without a writer and is refused below;
     * O_NOCTTY: a terminal named there never becomes ours */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return pk_err_errno(err, "cannot open");
    struct stat st;
    struct statfs sfs;
    char link[64], real[PATH_MAX];
    const char *why = NULL;
    if (fstat(fd, &st) < 0 || fstatfs(fd, &sfs) < 0)
        why = "cannot stat";
    else if (!S_ISREG(st.st_mode))
        why = S_ISDIR(st.st_mode) ? "a directory" : "not a regular file (a device, FIFO or socket)";
    else if (sfs.f_type == PROC_SUPER_MAGIC || sfs.f_type == SYSFS_MAGIC || sfs.f_type == DEBUGFS_MAGIC ||
             sfs.f_type == SECURITYFS_MAGIC || sfs.f_type == CGROUP_SUPER_MAGIC ||
             sfs.f_type == CGROUP2_SUPER_MAGIC)
        why = "on a kernel pseudo file system (/proc, /sys)";
    else if ((uint64_t)st.st_size > max_size)
        why = "larger than the limit for source files";
    if (!why) {
        /* the file actually opened, whatever symlinks or ".." led there */
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, real, sizeof real - 1);
        int where = OUTSIDE;
        if (n > 0) {
            real[n] = 0;
            for (size_t i = 0; i < nroots && where != INSIDE; i++) {
                char root_real[PATH_MAX];
                if (roots[i] && realpath(roots[i], root_real)) {
                    int w = path_under(real, root_real);
                    if (w != OUTSIDE)
                        where = w;
                }
            }
        }
        if (where != INSIDE)
            why = n <= 0            ? "cannot resolve its real path"
                  : where == HIDDEN ? "a hidden file or in a hidden directory (.ssh, .git, ...)"
                                    : "outside the compilation directories (widen with --source-root)";
    }
    if (why) {
        close(fd);
        return pk_err_set(err, "%s", why);
    }
    f->path = strdup(path);
    if (!f->path) {
        close(fd);
        return pk_err_set(err, "out of memory");
    }
    if (st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            close(fd);
            free(f->path);
            f->path = NULL;
            return pk_err_errno(err, "cannot mmap");
        }
        f->data = p;
        f->size = (size_t)st.st_size;
        f->is_mmap = 1;
    }
    close(fd);
    return 0;
}
