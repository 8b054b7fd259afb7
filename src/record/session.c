/* session.c — the directory an emulated recording writes into: one file per
 * process image (plugin/follow.c), read back by `pgokit record` once the
 * run is over.
 *
 *   <pid>-<start ns>-<comm>.data           a process's finished perf.data
 *   <pid>-<start ns>-<comm>.exact          its exact counts (--exact-counts)
 *   <name>.tmp.<pid>                       not finished: the process still
 *                                          runs, or died without finishing
 *                                          (SIGKILL, a crash of QEMU)
 *   unrecorded                             "pid\tcomm\twhy" lines: processes
 *                                          the plugin could not record
 */
#include "record/record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void pk_record_session_free(pk_record_session *s)
{
    for (size_t i = 0; i < s->parts.len; i++) {
        pk_record_part *p = &PK_VEC_AT(&s->parts, pk_record_part, i);
        free(p->data);
        free(p->exact);
    }
    pk_vec_free(&s->parts);
    for (size_t i = 0; i < s->unrecorded.len; i++)
        free(PK_VEC_AT(&s->unrecorded, pk_record_unrec, i).why);
    pk_vec_free(&s->unrecorded);
    pk_vec_free(&s->unfinished);
}

/* "<pid>-<ns>-<comm><suffix>": false when the name is not of that form. */
static bool parse_name(const char *name, size_t len, uint32_t *pid, uint64_t *ns, char comm[16])
{
    char *end;
    errno = 0;
    unsigned long p = strtoul(name, &end, 10);
    if (errno || end == name || *end != '-' || p == 0 || p > UINT32_MAX)
        return false;
    const char *t = end + 1;
    unsigned long long n = strtoull(t, &end, 10);
    if (errno || end == t || *end != '-')
        return false;
    size_t at = (size_t)(end + 1 - name);
    if (at > len)
        return false;
    snprintf(comm, 16, "%.*s", (int)(len - at), name + at);
    *pid = (uint32_t)p;
    *ns = n;
    return true;
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len >= n && !memcmp(s + len - n, suffix, n);
}

static pk_record_part *part_of(pk_record_session *s, uint32_t pid, uint64_t ns, const char *comm)
{
    for (size_t i = 0; i < s->parts.len; i++) {
        pk_record_part *p = &PK_VEC_AT(&s->parts, pk_record_part, i);
        if (p->pid == pid && p->start == ns)
            return p;
    }
    pk_record_part *p = pk_vec_push(&s->parts);
    if (p) {
        p->pid = pid;
        p->start = ns;
        snprintf(p->comm, sizeof p->comm, "%s", comm);
    }
    return p;
}

static int read_unrecorded(const char *path, pk_record_session *s, pk_err *err)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? 0 : pk_err_errno(err, "%s", path);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *comm = strchr(line, '\t'), *why = comm ? strchr(comm + 1, '\t') : NULL;
        if (!why)
            continue;   /* a line cut short by a full disk: nothing to say */
        *comm++ = 0;
        *why++ = 0;
        pk_record_unrec *u = pk_vec_push(&s->unrecorded);
        if (!u || !(u->why = strdup(why))) {
            fclose(f);
            return pk_err_set(err, "out of memory");
        }
        u->pid = (uint32_t)strtoul(line, NULL, 10);
        snprintf(u->comm, sizeof u->comm, "%s", comm);
    }
    fclose(f);
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const pk_record_part *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

int pk_record_session_scan(const char *dir, pk_record_session *s, pk_err *err)
{
    memset(s, 0, sizeof *s);
    pk_vec_init(&s->parts, sizeof(pk_record_part));
    pk_vec_init(&s->unfinished, sizeof(pk_record_unrec));
    pk_vec_init(&s->unrecorded, sizeof(pk_record_unrec));
    DIR *d = opendir(dir);
    if (!d)
        return pk_err_errno(err, "%s", dir);
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        size_t len = strlen(name);
        const char *tmp = strstr(name, ".tmp.");
        uint32_t pid;
        uint64_t ns;
        char comm[16];
        if (tmp && ends_with(name, (size_t)(tmp - name), ".data") &&
            parse_name(name, (size_t)(tmp - name) - 5, &pid, &ns, comm)) {
            pk_record_unrec *u = pk_vec_push(&s->unfinished);
            if (!u) {
                rc = pk_err_set(err, "out of memory");
                break;
            }
            u->pid = pid;
            snprintf(u->comm, sizeof u->comm, "%s", comm);
            continue;
        }
        bool data = ends_with(name, len, ".data"), exact = !data && ends_with(name, len, ".exact");
        if (tmp || (!data && !exact) || !parse_name(name, len - (data ? 5 : 6), &pid, &ns, comm))
            continue;
        pk_record_part *p = part_of(s, pid, ns, comm);
        char **slot = p ? (data ? &p->data : &p->exact) : NULL;
        if (!slot || asprintf(slot, "%s/%s", dir, name) < 0) {
            if (slot)
                *slot = NULL;
            rc = pk_err_set(err, "out of memory");
        }
    }
    closedir(d);
    if (rc == 0) {
        char *path = NULL;
        if (asprintf(&path, "%s/unrecorded", dir) < 0)
            rc = pk_err_set(err, "out of memory");
        else
            rc = read_unrecorded(path, s, err);
        free(path);
    }
    if (rc != 0) {
        pk_record_session_free(s);
        return -1;
    }
    /* exact counts without their perf.data (a writer that failed) are kept:
     * only data-less parts are dropped from the perf.data merge */
    if (s->parts.len > 1)
        qsort(s->parts.data, s->parts.len, sizeof(pk_record_part), by_start);
    return 0;
}

bool pk_record_session_alive(const char *dir, uint32_t pid)
{
    /* the pid may have been reused: it must be a process of this recording,
     * whose command line (a QEMU's, inherited by its fork children) names
     * the directory */
    char path[64], buf[8192];
    snprintf(path, sizeof path, "/proc/%u/cmdline", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;   /* a zombie: it is over */
    for (ssize_t i = 0; i < n; i++)
        if (!buf[i])
            buf[i] = ' ';
    buf[n] = 0;
    char key[4200];
    snprintf(key, sizeof key, "dir=%s", dir);
    size_t k = strlen(key);
    for (const char *at = strstr(buf, key); at; at = strstr(at + 1, key))
        if (at[k] == ',' || at[k] == ' ' || !at[k])
            return true;
    return false;
}

int pk_record_session_remove(const char *dir, pk_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : pk_err_errno(err, "%s", dir);
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT && rc == 0)
            rc = pk_err_errno(err, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (rmdir(dir) != 0 && rc == 0)
        rc = pk_err_errno(err, "%s", dir);
    return rc;
}
