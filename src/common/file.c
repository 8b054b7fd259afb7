/* file.c — whole-file read-only views and atomically committed outputs. */
#include "common/pk_common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

int pk_out_open(pk_out_file *o, const char *path, pk_err *err)
{
    o->fd = -1;
    o->written = 0;
    o->failed = 0;
    o->direct = 0;
    o->buf_len = 0;
    o->path = strdup(path);
    size_t n = strlen(path) + 32;
    o->tmp_path = malloc(n);
    if (!o->path || !o->tmp_path) {
        free(o->path);
        free(o->tmp_path);
        return pk_err_set(err, "%s: out of memory", path);
    }
    /* A device or a FIFO (/dev/null, /dev/stdout, a pipe) is written
     * directly: renaming a temporary over it would replace the device. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        o->fd = open(path, O_WRONLY | O_CLOEXEC);
        if (o->fd < 0) {
            pk_err_errno(err, "%s: cannot open", path);
            free(o->path);
            free(o->tmp_path);
            o->path = o->tmp_path = NULL;
            return -1;
        }
        o->direct = 1;
        return 0;
    }
    snprintf(o->tmp_path, n, "%s.tmp.%ld", path, (long)getpid());
    o->fd = open(o->tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o->fd < 0) {
        /* the user's path: the temporary is an implementation detail (a
         * missing or read-only directory fails the same for both) */
        pk_err_errno(err, "%s: cannot create", path);
        free(o->path);
        free(o->tmp_path);
        o->path = o->tmp_path = NULL;
        return -1;
    }
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
    if (o->tmp_path && !o->direct)
        unlink(o->tmp_path);
    free(o->path);
    free(o->tmp_path);
    o->path = o->tmp_path = NULL;
}
