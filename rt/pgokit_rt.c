/* pgokit_rt.c — set-up, fork handling and the raw-profile dump of libpgokit_rt.
 *
 * The dump writes only counters, link-time addresses and build-ids (format in
 * src/temporal/temporal.h); names stay in the binary and are correlated
 * offline. It may run in a signal handler, so it uses only async-signal-safe
 * calls (open/write/pwrite/rename/close/getpid) and static buffers guarded by
 * a dump lock, and it maps addresses to modules with a module list cached in
 * ordinary context (refreshed before every non-signal dump).
 * The file is written to "<final>.tmp.<pid>" and renamed, so a process killed
 * mid-dump never leaves a truncated file under the final name.
 */
#include "rt_internal.h"
#include "pgokit_rt.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RT_MAX_MODS 128
#define RT_MAX_SEGS 8
#define RT_PATH_MAX 1024

struct rt_mod {
    uintptr_t bias;
    uint32_t nseg;
    uintptr_t lo[RT_MAX_SEGS], hi[RT_MAX_SEGS];
    uint8_t build_id[64];
    uint32_t build_id_len;
    uint32_t path_len;
    char path[RT_PATH_MAX];
};

RT_HIDDEN const int pk_rt_dump_anchor = 1;
static struct rt_mod mods[RT_MAX_MODS];
static uint32_t nmods;
static char exe_path[RT_PATH_MAX];
/* Empty until the constructor reads PGOKIT_RT_FILE (kept in .bss: an
 * initialised 1 KiB buffer would cost 1 KiB of every instrumented file). */
static char file_pattern[RT_PATH_MAX];
static const char default_file[] = "default.pgoraw";
static int forked_child;
static int dump_lock;
static unsigned test_stall_seconds;
static char path_buf[RT_PATH_MAX + 64], tmp_buf[RT_PATH_MAX + 96];

/* ---------------------------------------------------------------- modules */

static void read_build_id(struct rt_mod *m, const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while (p + 12 <= end) {
            uint32_t namesz, descsz, type;
            memcpy(&namesz, p, 4); memcpy(&descsz, p + 4, 4); memcpy(&type, p + 8, 4);
            const uint8_t *name = p + 12;
            const uint8_t *desc = name + ((namesz + 3) & ~3u);
            if (desc + descsz > end) break;
            if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(name, "GNU", 4) && descsz <= 64) {
                memcpy(m->build_id, desc, descsz);
                m->build_id_len = descsz;
                return;
            }
            p = desc + ((descsz + 3) & ~3u);
        }
    }
}

static int module_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size; (void)data;
    if (nmods >= RT_MAX_MODS) return 1;
    struct rt_mod *m = &mods[nmods];
    m->bias = info->dlpi_addr;
    m->nseg = 0;
    for (int i = 0; i < info->dlpi_phnum && m->nseg < RT_MAX_SEGS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        m->lo[m->nseg] = info->dlpi_addr + ph->p_vaddr;
        m->hi[m->nseg] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        m->nseg++;
    }
    if (!m->nseg) return 0;
    m->build_id_len = 0;
    read_build_id(m, info);
    const char *name = nmods == 0 && (!info->dlpi_name || !info->dlpi_name[0]) ? exe_path : info->dlpi_name;
    size_t len = name ? strlen(name) : 0;
    if (len >= RT_PATH_MAX) len = RT_PATH_MAX - 1;
    memcpy(m->path, name ? name : "", len);
    m->path[len] = 0;
    m->path_len = (uint32_t)len;
    nmods++;
    return 0;
}

/* Records a module's .eh_frame_hdr search table if it has the encoding GNU
 * ld and lld write (version 1, pcrel|sdata4 eh_frame pointer, udata4 count,
 * datarel|sdata4 table). */
static int eh_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size; (void)data;
    for (int i = 0; i < info->dlpi_phnum && pk_rt_neh < RT_MAX_EH; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_GNU_EH_FRAME || ph->p_memsz < 12) continue;
        const uint8_t *h = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        if (h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b) continue;
        uint32_t n;
        memcpy(&n, h + 8, 4);
        if (12 + (uint64_t)n * 8 > ph->p_memsz) continue;
        pk_rt_eh[pk_rt_neh].hdr = (uintptr_t)h;
        pk_rt_eh[pk_rt_neh].tab = (const int32_t *)(h + 12);
        pk_rt_eh[pk_rt_neh].n = n;
        __atomic_store_n(&pk_rt_neh, pk_rt_neh + 1, __ATOMIC_RELEASE);
    }
    return 0;
}

static void refresh_modules(void)
{
    nmods = 0;
    dl_iterate_phdr(module_cb, NULL);
}

static uint32_t module_of(uintptr_t a)
{
    for (uint32_t i = 0; i < nmods; i++)
        for (uint32_t s = 0; s < mods[i].nseg; s++)
            if (a >= mods[i].lo[s] && a < mods[i].hi[s]) return i;
    return UINT32_MAX;
}

/* ---------------------------------------------------------------- writer */

struct wr {
    int fd;
    int failed;
    uint64_t hash;
    size_t len;
    uint8_t buf[2048];
};

static void wr_flush(struct wr *w)
{
    size_t off = 0;
    while (off < w->len && !w->failed) {
        ssize_t n = write(w->fd, w->buf + off, w->len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { w->failed = 1; break; }
        off += (size_t)n;
    }
    w->len = 0;
}

__attribute__((noinline)) static void wr_bytes(struct wr *w, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        w->hash ^= b[i];
        w->hash *= 0x100000001b3ull;
        if (w->len == sizeof w->buf) wr_flush(w);
        w->buf[w->len++] = b[i];
    }
}


static size_t put_str(char *dst, size_t pos, size_t cap, const char *s)
{
    while (*s && pos + 1 < cap) dst[pos++] = *s++;
    return pos;
}

static size_t put_uint(char *dst, size_t pos, size_t cap, unsigned long v)
{
    char tmp[24];
    int n = 0;
    do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n && pos + 1 < cap) dst[pos++] = tmp[--n];
    return pos;
}

/* Expands %p; a forked child without %p gets ".<pid>" before the extension. */
static void expand_path(const char *pattern, char *out, size_t cap)
{
    size_t pos = 0;
    int had_pid = 0;
    pid_t pid = getpid();
    for (const char *p = pattern; *p && pos + 1 < cap; p++) {
        if (p[0] == '%' && p[1] == 'p') { pos = put_uint(out, pos, cap, (unsigned long)pid); p++; had_pid = 1; }
        else if (p[0] == '%' && p[1] == '%') { out[pos++] = '%'; p++; }
        else out[pos++] = *p;
    }
    out[pos] = 0;
    if (had_pid || !forked_child) return;
    size_t dot = pos;
    for (size_t i = pos; i-- > 0;) {
        if (out[i] == '/') break;
        if (out[i] == '.') { dot = i; break; }
    }
    char ext[64];
    size_t elen = pos - dot < sizeof ext ? pos - dot : 0;
    memcpy(ext, out + dot, elen);
    ext[elen] = 0;
    pos = dot;
    out[pos] = 0;
    pos = put_str(out, pos, cap, ".");
    pos = put_uint(out, pos, cap, (unsigned long)pid);
    pos = put_str(out, pos, cap, ext);
    out[pos] = 0;
}

static void stall_for_tests(void)
{
    if (!test_stall_seconds) return;
    struct timespec ts = {(time_t)test_stall_seconds, 0};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static int write_profile(const char *final_path)
{
    size_t tl = put_str(tmp_buf, 0, sizeof tmp_buf, final_path);
    tl = put_str(tmp_buf, tl, sizeof tmp_buf, ".tmp.");
    tl = put_uint(tmp_buf, tl, sizeof tmp_buf, (unsigned long)getpid());
    tmp_buf[tl] = 0;

    uint32_t n = __atomic_load_n(&pk_rt_nrec, __ATOMIC_ACQUIRE);
    if (n > PGOKIT_RT_MAX_FUNCS) n = PGOKIT_RT_MAX_FUNCS;
    uint64_t live = 0;
    for (uint32_t i = 0; i < n; i++)
        live += __atomic_load_n(&pk_rt_recs[i].state, __ATOMIC_ACQUIRE) == RT_REC_LIVE;
    uint64_t total = 64;
    for (uint32_t i = 0; i < nmods; i++)
        total += (16 + mods[i].build_id_len + mods[i].path_len + 7) & ~7ull;
    total += 24 * live;

    struct wr w;
    /* Created exclusively: a symlink planted at the (predictable) name is
     * removed, never written through; a leftover of an earlier process
     * with this pid goes the same way. */
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    w.fd = open(tmp_buf, flags, 0644);
    if (w.fd < 0 && errno == EEXIST && unlink(tmp_buf) == 0) w.fd = open(tmp_buf, flags, 0644);
    if (w.fd < 0) return -1;
    w.failed = 0; w.len = 0; w.hash = 0xcbf29ce484222325ull;
    /* Header, module and record layouts: src/temporal/temporal.h. Each is
     * written as one struct (one call site instead of one per field). */
    uint64_t dropped = __atomic_load_n(&pk_rt_dropped, __ATOMIC_RELAXED);
    uint64_t redirected = __atomic_load_n(&pk_rt_redirected, __ATOMIC_RELAXED);
    struct {
        char magic[8];
        uint32_t version, flags;
        uint64_t total, checksum, pid;
        uint32_t nmods, redirected;
        uint64_t live, dropped;
    } hdr = {
        "PGOKRAW\n", 1, (pk_rt_count_mode ? 1u : 0u) | (dropped ? 2u : 0u), total,
        0 /* checksum, patched below */, (uint64_t)getpid(), nmods,
        redirected > UINT32_MAX ? UINT32_MAX : (uint32_t)redirected, live, dropped,
    };
    _Static_assert(sizeof hdr == 64, "raw profile header is 64 bytes");
    wr_bytes(&w, &hdr, sizeof hdr);
    static const uint8_t zeros[8];
    for (uint32_t i = 0; i < nmods; i++) {
        struct { uint32_t bid_len, path_len; uint64_t bias; } mh = {
            mods[i].build_id_len, mods[i].path_len, mods[i].bias,
        };
        wr_bytes(&w, &mh, sizeof mh);
        wr_bytes(&w, mods[i].build_id, mods[i].build_id_len);
        wr_bytes(&w, mods[i].path, mods[i].path_len);
        wr_bytes(&w, zeros, (8 - (mods[i].build_id_len + mods[i].path_len) % 8) % 8);
    }
    wr_flush(&w);
    stall_for_tests();
    uint64_t written = 0;
    for (uint32_t i = 0; i < n && written < live; i++) {
        const struct rt_rec *r = &pk_rt_recs[i];
        if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != RT_REC_LIVE) continue;
        /* ret − 5 is the start of a 5-byte call, or inside gcc's 6-byte one:
         * always within the entry hook of the function. */
        uintptr_t site = r->ret - 5;
        uint32_t mi = module_of(site);
        struct { uint64_t addr; uint32_t mod, reserved; uint64_t count; } rec = {
            mi == UINT32_MAX ? site : site - mods[mi].bias, mi, 0,
            __atomic_load_n(&r->count, __ATOMIC_RELAXED),
        };
        wr_bytes(&w, &rec, sizeof rec);
        written++;
    }
    wr_flush(&w);
    uint64_t sum = w.hash;
    int ok = !w.failed && written == live;
    while (ok && pwrite(w.fd, &sum, 8, 24) != 8) {
        if (errno != EINTR) ok = 0;
    }
    if (close(w.fd) != 0) ok = 0;
    if (!ok || rename(tmp_buf, final_path) != 0) {
        int e = errno;
        unlink(tmp_buf);
        errno = e ? e : EIO;
        return -1;
    }
    return 0;
}

static int lock_dump(int wait)
{
    while (__atomic_exchange_n(&dump_lock, 1, __ATOMIC_ACQUIRE)) {
        if (!wait) return 0;
        sched_yield();
    }
    return 1;
}

static void unlock_dump(void) { __atomic_store_n(&dump_lock, 0, __ATOMIC_RELEASE); }

static int dump(const char *pattern, int in_signal)
{
    if (!lock_dump(!in_signal)) { errno = EBUSY; return -1; }
    pk_rt_seal_code(!in_signal);
    if (!in_signal) refresh_modules();
    expand_path(pattern, path_buf, sizeof path_buf);
    int rc = write_profile(path_buf);
    unlock_dump();
    return rc;
}

static const char *cur_pattern(void) { return file_pattern[0] ? file_pattern : default_file; }

__attribute__((visibility("default"))) int pgokit_rt_dump(void)
{
    return dump(cur_pattern(), 0);
}

__attribute__((visibility("default"))) int pgokit_rt_dump_to(const char *path)
{
    if (!path || !*path) { errno = EINVAL; return -1; }
    return dump(path, 0);
}

static void reset_table(void)
{
    uint32_t n = __atomic_load_n(&pk_rt_nrec, __ATOMIC_ACQUIRE);
    if (n > PGOKIT_RT_MAX_FUNCS) n = PGOKIT_RT_MAX_FUNCS;
    for (uint32_t i = 0; i < n; i++) {
        /* Every used hash slot was claimed by some allocated record (live, or
         * caught between its claim and LIVE by a fork), so clearing the slot
         * of every allocated record empties the table. */
        __atomic_store_n(&pk_rt_hash[pk_rt_recs[i].hslot], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&pk_rt_recs[i].state, RT_REC_FREE, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&pk_rt_nrec, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&pk_rt_dropped, 0, __ATOMIC_RELAXED);
}

__attribute__((visibility("default"))) void pgokit_rt_reset(void)
{
    lock_dump(1);
    pk_rt_seal_code(1);
    reset_table();
    unlock_dump();
}

/* ------------------------------------------------------ process events */

static void on_exit_dump(void)
{
    if (!pk_rt_disabled) dump(cur_pattern(), 0);
}

static void on_signal(int sig)
{
    (void)sig;
    int e = errno;
    dump(cur_pattern(), 1);
    errno = e;
}

/* The child starts an empty profile of its own (its pid names its file);
 * sites the parent already patched stay NOPs, so the child's trace lists
 * the functions first executed after the fork. */
static void on_fork_child(void)
{
    forked_child = 1;
    dump_lock = 0;
    pk_rt_patch_lock = 0;   /* a parent thread may have held it at fork time */
    reset_table();
}

static int parse_signal(const char *s)
{
    static const char names[][5] = {"USR1", "USR2", "HUP", "INT", "TERM", "QUIT", "PROF", "ALRM"};
    static const unsigned char sigs[] = {SIGUSR1, SIGUSR2, SIGHUP, SIGINT, SIGTERM, SIGQUIT, SIGPROF, SIGALRM};
    if (!strcmp(s, "none") || !strcmp(s, "0")) return 0;
    if (!strncmp(s, "SIG", 3)) s += 3;
    for (size_t i = 0; i < sizeof sigs; i++)
        if (!strcmp(s, names[i])) return sigs[i];
    char *end;
    long v = strtol(s, &end, 10);
    return *end || v <= 0 || v >= NSIG ? -1 : (int)v;
}

__attribute__((constructor(101))) static void rt_init(void)
{
    /* Always re-read the mode: an instrumented function may have run before
     * libc set up environ (ifunc resolvers, preinit), seeing the defaults. */
    pk_rt_early_init();
    if (pk_rt_disabled) return;
    const char *f = getenv("PGOKIT_RT_FILE");
    if (f && *f && strlen(f) < sizeof file_pattern) strcpy(file_pattern, f);
    const char *st = getenv("PGOKIT_RT_TEST_STALL");
    if (st) test_stall_seconds = (unsigned)strtoul(st, NULL, 10);
    ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
    exe_path[n > 0 ? n : 0] = 0;
    refresh_modules();
    /* Executable ranges for caller redirection (the hot path cannot call the
     * loader); modules loaded later are simply not redirected. */
    uint32_t nt = 0;
    for (uint32_t i = 0; i < nmods; i++)
        for (uint32_t k = 0; k < mods[i].nseg && nt < RT_MAX_TEXT; k++, nt++) {
            pk_rt_text[nt][0] = mods[i].lo[k];
            pk_rt_text[nt][1] = mods[i].hi[k];
        }
    __atomic_store_n(&pk_rt_ntext, nt, __ATOMIC_RELEASE);
    if (!__atomic_load_n(&pk_rt_neh, __ATOMIC_ACQUIRE)) dl_iterate_phdr(eh_cb, NULL);
    const char *sv = getenv("PGOKIT_RT_SIGNAL");
    int sig = sv ? parse_signal(sv) : SIGUSR2;
    if (sig > 0) {
        struct sigaction old;
        if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_DFL && !(old.sa_flags & SA_SIGINFO)) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_signal;
            sa.sa_flags = SA_RESTART;
            sigfillset(&sa.sa_mask);
            sigaction(sig, &sa, NULL);
        }
    }
    pthread_atfork(NULL, NULL, on_fork_child);
    atexit(on_exit_dump);
}
