/* debuginfo.c — where a binary's debug information lives, found the way gdb,
 * perf and the elfutils tools find it: build-id trees under debug roots,
 * .gnu_debuglink (CRC32 checked), debuginfod; and the supplementary file of
 * a dwz-compressed debug file (.gnu_debugaltlink / .debug_sup).
 *
 * debuginfod is reached through libdebuginfod, loaded with dlopen as
 * elfutils' own libdwfl does: pgokit runs without it (and the QEMU plugin,
 * linked from the same archive, does not pull libcurl into the guest). */
#include "binary/binary.h"
#include "binary/elf_internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <elfutils/debuginfod.h>

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"
/* debuginfod's own default timeout is 90 s per transfer and without a bound
 * on the whole; a profile run should not hang on a slow server that long. */
#define DEBUGINFOD_DEFAULT_DEADLINE_S 30

static int file_crc(const char *path, uint32_t *crc)
{
    pk_mapped_file f;
    pk_err e;
    if (pk_file_map_regular(&f, path, &e) < 0)
        return -1;
    uLong c = crc32(0L, Z_NULL, 0);
    size_t done = 0;
    while (done < f.size) {
        size_t n = f.size - done > 0x40000000 ? 0x40000000 : f.size - done;
        c = crc32(c, f.data + done, (uInt)n);
        done += n;
    }
    pk_file_unmap(&f);
    *crc = (uint32_t)c;
    return 0;
}

static bool same_file(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

static void hex_of(const uint8_t *id, size_t len, char *buf, size_t bufsize)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (size_t i = 0; i < len && o + 2 < bufsize; i++) {
        buf[o++] = hex[id[i] >> 4];
        buf[o++] = hex[id[i] & 15];
    }
    if (bufsize)
        buf[o < bufsize ? o : bufsize - 1] = 0;
}

/* A DWARF 5 supplementary file's own .debug_sup (is_supplementary = 1, no
 * file name): its checksum, which stands for a build-id (dwz -5 writes no
 * build-id note into it). */
static void sup_checksum(const pk_elf *e, const uint8_t **id, size_t *len)
{
    *id = NULL;
    *len = 0;
    const pk_elf_section *s = pk_elf_section_by_name(e, ".debug_sup");
    const uint8_t *d = e->file.data;
    if (!s || s->type == SHT_NOBITS || s->size < 5 || d[s->offset + 2] != 1)
        return;
    const char *name = (const char *)d + s->offset + 3;
    size_t n = strnlen(name, s->size - 3);
    if (n == s->size - 3)
        return;
    pk_cursor c;
    pk_cursor_init(&c, d + s->offset + 3 + n + 1, (size_t)(s->size - 3 - n - 1));
    uint64_t clen = pk_cursor_uleb(&c);
    if (!c.bad && clen <= pk_cursor_left(&c)) {
        *id = c.pos;
        *len = (size_t)clen;
    }
}

/* 1: `path` is an ELF file with build-id (or supplementary checksum) `id`;
 * 0: it is not (or unreadable). */
static int build_id_matches(const char *path, const uint8_t *id, size_t len)
{
    pk_elf *e;
    pk_err ignored;
    if (pk_elf_open(&e, path, &ignored) < 0)
        return 0;
    const uint8_t *got;
    size_t got_len;
    pk_elf_build_id(e, &got, &got_len);
    int ok = got_len == len && !memcmp(got, id, len);
    if (!ok) {
        sup_checksum(e, &got, &got_len);
        ok = got_len == len && got_len && !memcmp(got, id, len);
    }
    pk_elf_close(e);
    return ok;
}

/* The roots searched, --debug-dir ones first. */
static size_t debug_roots(const pk_debug_opts *o, const char **roots, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; o && i < o->ndebug_dirs && n < max; i++)
        roots[n++] = o->debug_dirs[i];
    if ((!o || !o->no_default_dir) && n < max)
        roots[n++] = DEFAULT_DEBUG_ROOT;
    return n;
}

/* ROOT/.build-id/xx/rest.debug of each root whose build-id matches. */
static char *by_build_id(const pk_debug_opts *o, const uint8_t *id, size_t len, const char *self,
                         char *refused, size_t refused_size)
{
    if (len < 2)
        return NULL;
    char hex[256], buf[PATH_MAX + 300];
    hex_of(id, len, hex, sizeof hex);
    const char *roots[64];
    size_t nroots = debug_roots(o, roots, 64);
    for (size_t r = 0; r < nroots; r++) {
        snprintf(buf, sizeof buf, "%s/.build-id/%.2s/%s.debug", roots[r], hex, hex + 2);
        if (access(buf, R_OK) != 0 || (self && same_file(buf, self)))
            continue;
        if (build_id_matches(buf, id, len))
            return strdup(buf);
        if (refused && !*refused)
            snprintf(refused, refused_size, "%s has another build-id than %s", buf, hex);
    }
    return NULL;
}

static void dir_of(const char *path, char *dir, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, size, ".");
    else if (slash == path)
        snprintf(dir, size, "/");
    else
        snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

static char *by_debuglink(const pk_elf *e, const pk_debug_opts *o, char *refused, size_t refused_size)
{
    uint32_t crc = 0;
    const char *link = pk_elf_debuglink(e, &crc);
    if (!link)
        return NULL;
    char dir[PATH_MAX], absdir[PATH_MAX], buf[2 * PATH_MAX + 64];
    dir_of(pk_elf_path(e), dir, sizeof dir);
    if (!realpath(dir, absdir))
        snprintf(absdir, sizeof absdir, "%s", dir);
    const char *roots[64];
    size_t nroots = debug_roots(o, roots, 64);
    for (size_t i = 0; i < 2 + nroots; i++) {
        if (i == 0)
            snprintf(buf, sizeof buf, "%s/%s", dir, link);
        else if (i == 1)
            snprintf(buf, sizeof buf, "%s/.debug/%s", dir, link);
        else
            snprintf(buf, sizeof buf, "%s%s/%s", roots[i - 2], absdir, link);
        if (access(buf, R_OK) != 0 || same_file(buf, pk_elf_path(e)))
            continue; /* a debuglink naming the binary itself */
        uint32_t got = 0;
        if (file_crc(buf, &got) < 0)
            continue;
        if (got == crc)
            return strdup(buf);
        if (refused && !*refused)
            snprintf(refused, refused_size,
                     "%s (named by .gnu_debuglink) has CRC32 %08x, not the %08x the binary records", buf,
                     got, crc);
    }
    return NULL;
}

/* ---- debuginfod ---- */

typedef struct dbgd_api {
    int loaded;
    debuginfod_client *(*begin)(void);
    void (*end)(debuginfod_client *);
    int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
    void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
    void (*set_user_data)(debuginfod_client *, void *);
    void *(*get_user_data)(debuginfod_client *);
} dbgd_api;

static dbgd_api dbgd;

static int dbgd_load(void)
{
    if (dbgd.loaded)
        return dbgd.loaded > 0 ? 0 : -1;
    dbgd.loaded = -1;
    void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    *(void **)&dbgd.begin = dlsym(h, "debuginfod_begin");
    *(void **)&dbgd.end = dlsym(h, "debuginfod_end");
    *(void **)&dbgd.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
    *(void **)&dbgd.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
    *(void **)&dbgd.set_user_data = dlsym(h, "debuginfod_set_user_data");
    *(void **)&dbgd.get_user_data = dlsym(h, "debuginfod_get_user_data");
    if (!dbgd.begin || !dbgd.end || !dbgd.find_debuginfo || !dbgd.set_progressfn || !dbgd.set_user_data ||
        !dbgd.get_user_data)
        return -1; /* the handle stays open: a half-usable library is not retried */
    dbgd.loaded = 1;
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Called by libdebuginfod while it waits: a non-zero return cancels. */
static int dbgd_progress(debuginfod_client *c, long done, long total)
{
    (void)done;
    (void)total;
    const double *deadline = dbgd.get_user_data(c);
    return deadline && now_s() > *deadline;
}

static bool debuginfod_wanted(const pk_debug_opts *o)
{
    const char *urls = getenv("DEBUGINFOD_URLS");
    return !(o && o->no_debuginfod) && urls && *urls;
}

/* 0 with *path (malloc'ed, in debuginfod's cache) or *path = NULL when no
 * server has it; -1 with a message (without the binary's name) for any
 * other failure. */
static int by_debuginfod(const uint8_t *id, size_t len, char **path, pk_err *err)
{
    *path = NULL;
    const char *urls = getenv("DEBUGINFOD_URLS");
    char hex[256];
    hex_of(id, len, hex, sizeof hex);
    if (dbgd_load() < 0)
        return pk_err_set(err, "DEBUGINFOD_URLS is set but libdebuginfod.so.1 cannot be loaded "
                               "(install libdebuginfod1, or unset DEBUGINFOD_URLS)");
    double limit = DEBUGINFOD_DEFAULT_DEADLINE_S;
    const char *t = getenv("DEBUGINFOD_TIMEOUT");
    if (t && atof(t) > 0)
        limit = atof(t);
    double deadline = now_s() + limit;
    debuginfod_client *c = dbgd.begin();
    if (!c)
        return pk_err_set(err, "debuginfod client could not be created");
    dbgd.set_user_data(c, &deadline);
    dbgd.set_progressfn(c, dbgd_progress);
    char *got = NULL;
    double t0 = now_s();
    int fd = dbgd.find_debuginfo(c, id, (int)len, &got);
    /* a cancel by dbgd_progress comes back as "not found": tell it by the
     * time it took (a real 404 is quick) */
    bool late = now_s() - t0 >= 0.95 * limit;
    dbgd.end(c);
    if (fd >= 0) {
        close(fd);
        if (!got)
            return pk_err_set(err, "debuginfod gave no path for build-id %s", hex);
        if (!build_id_matches(got, id, len)) {
            pk_err_set(err, "debuginfod (%s) served %s for build-id %s, but its build-id differs", urls,
                       got, hex);
            free(got);
            return -1;
        }
        *path = got;
        return 0;
    }
    free(got);
    if (late || fd == -ECANCELED || fd == -ETIME || fd == -ETIMEDOUT)
        return pk_err_set(err, "debuginfod (%s): no answer for build-id %s within %.0f s (DEBUGINFOD_TIMEOUT)",
                          urls, hex, limit);
    if (fd == -ENOENT)
        return 0;
    return pk_err_set(err, "debuginfod (%s): build-id %s: %s", urls, hex, strerror(-fd));
}

int pk_debuginfo_find(const pk_elf *e, const pk_debug_opts *o, char **path, const char **how, char **why_not,
                      pk_err *err)
{
    *path = NULL;
    *how = NULL;
    if (why_not)
        *why_not = NULL;
    char refused[2 * PATH_MAX + 200] = "";
    const uint8_t *id;
    size_t len;
    pk_elf_build_id(e, &id, &len);
    if ((*path = by_build_id(o, id, len, pk_elf_path(e), refused, sizeof refused))) {
        *how = "build-id";
        return 0;
    }
    if ((*path = by_debuglink(e, o, refused, sizeof refused))) {
        *how = "debuglink";
        return 0;
    }
    /* a refused candidate, or what debuginfod said, is kept for the error
     * of whoever needs the debug information; a command that does not
     * need it goes on */
    pk_err dbgd_err = {{0}};
    if (len >= 2 && debuginfod_wanted(o)) {
        if (by_debuginfod(id, len, path, &dbgd_err) == 0 && *path) {
            *how = "debuginfod";
            return 0;
        }
        if (!dbgd_err.msg[0]) {
            char hex[256];
            hex_of(id, len, hex, sizeof hex);
            pk_err_set(&dbgd_err, "no debug information for build-id %s on the debuginfod servers (%s)", hex,
                       getenv("DEBUGINFOD_URLS"));
        }
    } else if (len < 2 && debuginfod_wanted(o)) {
        pk_err_set(&dbgd_err, "no build-id note, so debuginfod (DEBUGINFOD_URLS=%s) cannot be asked for its "
                              "debug information", getenv("DEBUGINFOD_URLS"));
    }
    if (!why_not || (!*refused && !dbgd_err.msg[0]))
        return 0;
    if (asprintf(why_not, "%s%s%s%s", *refused ? "separate debug file refused: " : "", refused,
                 *refused && dbgd_err.msg[0] ? "; " : "", dbgd_err.msg) < 0) {
        *why_not = NULL;
        return pk_err_set(err, "%s: out of memory", pk_elf_path(e));
    }
    return 0;
}

int pk_elf_find_debug_file(const pk_elf *e, char **path, pk_err *err)
{
    const char *how;
    pk_debug_opts none = {.no_debuginfod = true};
    return pk_debuginfo_find(e, &none, path, &how, NULL, err);
}

/* ---- dwz supplementary files ---- */

const char *pk_elf_altlink(const pk_elf *e, const uint8_t **id, size_t *id_len)
{
    *id = NULL;
    *id_len = 0;
    const pk_elf_section *s = pk_elf_section_by_name(e, ".gnu_debugaltlink");
    const uint8_t *d = e->file.data;
    if (s && s->type != SHT_NOBITS && s->size > 1) {
        const char *name = (const char *)d + s->offset;
        size_t n = strnlen(name, s->size);
        if (n == 0 || n == s->size)
            return NULL;
        *id = d + s->offset + n + 1;
        *id_len = s->size - n - 1;
        return name;
    }
    /* DWARF 5: version (2), is_supplementary (1), file name, checksum
     * (ULEB length, bytes: dwz writes the build-id there) */
    s = pk_elf_section_by_name(e, ".debug_sup");
    if (!s || s->type == SHT_NOBITS || s->size < 5 || d[s->offset + 2] != 0)
        return NULL;
    const char *name = (const char *)d + s->offset + 3;
    size_t n = strnlen(name, s->size - 3);
    if (n == 0 || n == s->size - 3)
        return NULL;
    pk_cursor c;
    pk_cursor_init(&c, d + s->offset + 3 + n + 1, (size_t)(s->size - 3 - n - 1));
    uint64_t clen = pk_cursor_uleb(&c);
    if (!c.bad && clen <= pk_cursor_left(&c)) {
        *id = c.pos;
        *id_len = (size_t)clen;
    }
    return name;
}

int pk_debuginfo_find_alt(const pk_elf *dbg, const pk_debug_opts *o, char **path, pk_err *err)
{
    *path = NULL;
    const uint8_t *id;
    size_t len;
    const char *name = pk_elf_altlink(dbg, &id, &len);
    if (!name)
        return 0;
    char dir[PATH_MAX], buf[2 * PATH_MAX + 64];
    dir_of(pk_elf_path(dbg), dir, sizeof dir);
    const char *roots[64];
    size_t nroots = debug_roots(o, roots, 64);
    /* dh_dwz writes an absolute /usr/lib/debug/.dwz/... name: under a root
     * that stands for /usr/lib/debug, the same rest of the path */
    const char *rest = !strncmp(name, DEFAULT_DEBUG_ROOT "/", strlen(DEFAULT_DEBUG_ROOT) + 1)
                           ? name + strlen(DEFAULT_DEBUG_ROOT)
                           : NULL;
    for (size_t i = 0; i < 1 + nroots; i++) {
        if (i == 0 && name[0] == '/')
            snprintf(buf, sizeof buf, "%s", name);
        else if (i == 0)
            snprintf(buf, sizeof buf, "%s/%s", dir, name);
        else if (rest)
            snprintf(buf, sizeof buf, "%s%s", roots[i - 1], rest);
        else
            continue;
        if (access(buf, R_OK) == 0 && (len == 0 || build_id_matches(buf, id, len))) {
            *path = strdup(buf);
            return *path ? 0 : pk_err_set(err, "out of memory");
        }
    }
    if ((*path = by_build_id(o, id, len, NULL, NULL, 0)))
        return 0;
    if (len >= 2 && debuginfod_wanted(o)) {
        if (by_debuginfod(id, len, path, err) < 0)
            return pk_err_prefix(err, "%s: its dwz supplementary file %s", pk_elf_path(dbg), name);
        if (*path)
            return 0;
    }
    char hex[256];
    hex_of(id, len, hex, sizeof hex);
    return pk_err_set(err,
                      "%s: the dwz supplementary file it names (%s, build-id %s) was found neither there, "
                      "beside it, under the debug roots nor%s through debuginfod",
                      pk_elf_path(dbg), name, hex, debuginfod_wanted(o) ? "" : " (DEBUGINFOD_URLS unset)");
}
