/* pk_common.h — errors as values, byte readers, files, growable arrays.
 *
 * Every fallible library function takes a `pk_err *` and returns an int:
 * 0 on success, -1 on failure with a message in the pk_err. The library never
 * prints and never exits; the CLI decides what to do with the message.
 * Messages about bad input name the file and the byte offset:
 *     pk_err_set(err, "%s: offset %llu: record size %u is smaller than 8", ...)
 */
#ifndef PK_COMMON_H
#define PK_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PK_ERR_MAX 1024

typedef struct pk_err {
    char msg[PK_ERR_MAX];
} pk_err;

/* Sets the message (printf-style) and returns -1, so callers can write
 * `return pk_err_set(err, ...);`. A NULL err is allowed and ignored. */
int pk_err_set(pk_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prepends "prefix: " to an existing message; returns -1. */
int pk_err_prefix(pk_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Message for errno-style failures: "<what>: <strerror(errno)>"; returns -1. */
int pk_err_errno(pk_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Escapes bytes for a message or a terminal (never raw control bytes):
 * printable ASCII is kept, \n \t \r as such, anything else as \xNN. With
 * PK_ESC_KEEP_UTF8, valid UTF-8 sequences are kept (names in messages),
 * except the C1 controls and the bidirectional formatting characters;
 * with PK_ESC_BACKSLASH a backslash is doubled (an unambiguous rendering of
 * file bytes). Writes at most cap bytes including the NUL; returns the length
 * the whole escape needs (snprintf-style). */
enum { PK_ESC_KEEP_UTF8 = 1, PK_ESC_BACKSLASH = 2 };
size_t pk_escape(char *out, size_t cap, const void *data, size_t n, unsigned flags);

/* What a message writer returns after snprintf (n: its result) into a
 * buffer of cap bytes: the length written, n when it fit and cap - 1 when
 * the text was cut, 0 on an output error. */
static inline int pk_snprintf_len(int n, size_t cap) { return n < 0 ? 0 : (size_t)n < cap ? n : (int)cap - 1; }

/* ---- unaligned little-endian loads and stores (perf.data in pipe mode is
 * not 8-byte aligned, ELF/DWARF fields rarely are) ---- */
static inline uint16_t pk_ld16(const void *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t pk_ld32(const void *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t pk_ld64(const void *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline void pk_st16(void *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void pk_st32(void *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void pk_st64(void *p, uint64_t v) { memcpy(p, &v, 8); }

/* ---- a read-only view of a whole file (mmap, or read for pipes/empty) ---- */
typedef struct pk_mapped_file {
    const uint8_t *data;
    size_t size;
    char *path;      /* owned copy, for error messages */
    int is_mmap;
    int is_borrowed; /* data belongs to the caller (pk_file_borrow) */
} pk_mapped_file;

int pk_file_map(pk_mapped_file *f, const char *path, pk_err *err);
/* The same for a file that can only be a regular file (an ELF binary and
 * the debug and .dwo files it names): a device or FIFO is refused, not read
 * without end (/dev/zero as a .dwo name) or waited on (/dev/stdin). */
int pk_file_map_regular(pk_mapped_file *f, const char *path, pk_err *err);
/* The same for a file named by data the user did not write (a source file
 * named in a binary's DWARF, shown in a page meant for sharing): it is read
 * only if it is a regular file (opened without waiting on a FIFO, so never a
 * device or /proc), of at most max_size bytes, on a disk file system (not
 * /proc or /sys), and its real path (symlinks resolved) lies under one of
 * the `roots` directories ("/" is never a root) through no hidden
 * (dot-named) directory or file. Otherwise -1, with the reason alone (no
 * path) in err. */
int pk_file_map_confined(pk_mapped_file *f, const char *path, const char *const *roots, size_t nroots,
                         uint64_t max_size, pk_err *err);
/* A view of bytes the caller already holds in memory (an embedder that
 * received a file over the network, a fuzzer): readers that keep a
 * pk_mapped_file work on it unchanged. The bytes must outlive the view;
 * pk_file_unmap frees only the copy of `name` (used in messages). */
int pk_file_borrow(pk_mapped_file *f, const void *data, size_t size, const char *name, pk_err *err);
void pk_file_unmap(pk_mapped_file *f);
/* Gives the mapped pages back (they are read again from the page cache if
 * touched later): for a file that is mostly done with but still referenced. */
void pk_file_release_pages(const pk_mapped_file *f);

/* ---- output written to a temporary "<path>.tmp.<random>" beside it and
 * renamed on commit, so a failed run never leaves a half-written file under
 * the final name. The temporary is created exclusively (never through a
 * symlink or over another file). A target that is a device or FIFO
 * (/dev/null, /dev/stdout) is written in place. ---- */
typedef struct pk_out_file {
    int fd;
    char *path;      /* final name */
    char *tmp_path;  /* where bytes go until commit */
    uint64_t written;
    int failed;      /* a write failed: commit will refuse */
    int direct;      /* the target is a device or FIFO: written in place */
    char buf[1 << 16];
    size_t buf_len;
} pk_out_file;

int pk_out_open(pk_out_file *o, const char *path, pk_err *err);
int pk_out_write(pk_out_file *o, const void *data, size_t len, pk_err *err);
int pk_out_printf(pk_out_file *o, pk_err *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Seek-and-patch bytes already written (flushes first). */
int pk_out_pwrite(pk_out_file *o, const void *data, size_t len, uint64_t offset, pk_err *err);
int pk_out_commit(pk_out_file *o, pk_err *err); /* flush, fsync-free close, rename */
void pk_out_abort(pk_out_file *o);              /* close and unlink the temporary */

/* Creates the temporary for `path` as pk_out_open does (for a writer that
 * hands the name to another program, as record does to perf): returns its
 * descriptor, open for writing, and the malloc'd name in *tmp_path, or -1. */
int pk_out_create_temporary(const char *path, char **tmp_path, pk_err *err);
/* The temporaries that a signal would orphan. pk_out_open and commit/abort
 * keep the list for their own; a writer of its own temporary (above) tracks
 * it while it lives. pk_out_remove_temporaries unlinks every one listed and
 * is async-signal-safe: a command-line handler for SIGTERM/SIGINT/SIGHUP
 * calls it, then dies of the signal. The one process-wide table of the
 * library, since a signal handler has no other way to find them. */
void pk_out_track_temporary(char *tmp_path);
void pk_out_untrack_temporary(const char *tmp_path);
void pk_out_remove_temporaries(void);
/* The same for a directory of temporaries (its entries, then itself). */
void pk_out_track_directory(char *dir);
void pk_out_untrack_directory(const char *dir);
/* Whether two paths name the same file (device and inode; "-" is standard
 * input). False when either does not exist. */
bool pk_same_file(const char *a, const char *b);

/* ---- growable array of fixed-size elements ---- */
typedef struct pk_vec {
    void *data;
    size_t len, cap, elem;
} pk_vec;

static inline void pk_vec_init(pk_vec *v, size_t elem) { v->data = NULL; v->len = v->cap = 0; v->elem = elem; }
void *pk_vec_push(pk_vec *v);          /* returns a zeroed slot, NULL on OOM */
int pk_vec_reserve(pk_vec *v, size_t n);
int pk_vec_reserve_exact(pk_vec *v, size_t n); /* capacity n exactly (if larger) */
void pk_vec_free(pk_vec *v);
/* Gives back the unused capacity (for a vector that is done growing). */
void pk_vec_shrink(pk_vec *v);
#define PK_VEC_AT(v, T, i) (((T *)(v)->data)[i])

/* Sorts n elements of `elem` bytes by the u64 at byte offset key_off,
 * stably: an LSD radix sort on 8-bit digits that skips the digits all keys
 * share (addresses of one binary vary in 2-3 of them), several times
 * cheaper than qsort's comparator calls on large arrays. Sorting by key B
 * and then by key A orders by (A, B). -1 on OOM (the array is unchanged). */
int pk_sort_by_u64(void *base, size_t n, size_t elem, size_t key_off);

/* Sorted arrays of u64 (addresses): the index of the first element >= x
 * (n when none); whether x is one of them; sorts v and drops repeats,
 * returning the count left. */
size_t pk_u64_lower_bound(const uint64_t *v, size_t n, uint64_t x);
static inline bool pk_u64_sorted_has(const uint64_t *v, size_t n, uint64_t x)
{
    size_t i = pk_u64_lower_bound(v, n, x);
    return i < n && v[i] == x;
}
size_t pk_u64_sort_unique(uint64_t *v, size_t n);

/* Removes adjacent repetitions of windows of 1..max_len elements in place,
 * shortest windows first (a b a b c becomes a b c); max_len < 0: any
 * length. Elements compare bytewise (no padding in them). Returns the new
 * count. Calling contexts use it: recursion would otherwise make their
 * number grow with the recursion depth. */
size_t pk_compress_repeats(void *s, size_t n, size_t elem, int max_len);

/* ---- address buckets: narrows binary searches over a sorted address
 * array (symbols, probes) to the few entries of one small address range.
 * About two buckets per entry; none (plain search) for a sparse array. ---- */
typedef struct pk_addr_buckets {
    uint32_t *first;  /* first[b]: entries with key < bucket b's start */
    size_t n;         /* buckets (first has n + 1 entries) */
    uint64_t lo;
    unsigned shift;   /* bucket b covers [lo + (b << shift), lo + ((b + 1) << shift)) */
} pk_addr_buckets;

/* Over n elements of `elem` bytes whose u64 at key_off is sorted ascending.
 * -1 on OOM (b is then empty: searches stay correct, only slower). */
int pk_addr_buckets_build(pk_addr_buckets *b, const void *base, size_t n, size_t elem, size_t key_off);
void pk_addr_buckets_free(pk_addr_buckets *b);
/* [*lo, *hi] holds both the lower and the upper bound of addr among the
 * n sorted keys (search that range instead of [0, n]). */
static inline void pk_addr_buckets_range(const pk_addr_buckets *b, uint64_t addr, size_t n, size_t *lo, size_t *hi)
{
    *lo = 0;
    *hi = n;
    if (!b->first)
        return;
    if (addr < b->lo) {
        *hi = 0;
        return;
    }
    uint64_t k = (addr - b->lo) >> b->shift;
    if (k < b->n) {
        *lo = b->first[k];
        *hi = b->first[k + 1];
    } else {
        *lo = b->first[b->n];
    }
}

/* ---- allocation helpers that never return NULL silently: callers check ---- */
void *pk_xrealloc_array(void *p, size_t n, size_t elem); /* NULL on overflow/OOM */
/* calloc for memory that will be read before it is written (hash tables,
 * caches): zeroed by writing, so each page is mapped once. calloc's fresh
 * pages are the shared zero page until the first write, which then copies
 * it (two faults, and with a second thread running a TLB flush of the other
 * CPU each time). NULL on overflow/OOM. */
void *pk_zalloc(size_t n, size_t elem);

/* ---- 64-bit hash ---- */
static inline uint64_t pk_hash64(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}
uint64_t pk_hash_bytes(const void *p, size_t n);
/* Hash of an array of 64-bit words (call stacks, address lists): one
 * multiply per word instead of one per byte, which is what pk_hash_bytes
 * costs on the per-sample path. Not interchangeable with pk_hash_bytes. */
uint64_t pk_hash_u64s(const uint64_t *w, size_t n);

/* ---- open-addressed map u64 → u64 (every key allowed; values are counts or
 * indexes). The hot structure of aggregation: one array of (key, value)
 * pairs so a lookup touches one cache line, no per-entry allocation. Key 0
 * marks a free slot, so a real key 0 is kept aside in `zero_val`. A zeroed struct is an empty map. */
typedef struct pk_u64map_entry {
    uint64_t key, val;
} pk_u64map_entry;

typedef struct pk_u64map {
    pk_u64map_entry *e;
    size_t cap;      /* power of two (0 before the first insertion) */
    size_t len;      /* keys present, key 0 included */
    bool has_zero;   /* key 0 is present; its value is zero_val */
    uint64_t zero_val;
} pk_u64map;

int pk_u64map_init(pk_u64map *m, size_t initial_cap);
void pk_u64map_free(pk_u64map *m);
/* Returns a pointer to the value slot for key, inserting 0 if absent; NULL
 * on OOM. The pointer is valid until the next insertion. */
uint64_t *pk_u64map_slot(pk_u64map *m, uint64_t key);
/* Returns a pointer to the value, or NULL if absent. */
uint64_t *pk_u64map_get(const pk_u64map *m, uint64_t key);
/* Removes every key, keeping the table. */
void pk_u64map_clear(pk_u64map *m);
/* Iteration in table order:
 *   for (size_t i = 0; i < pk_u64map_end(m); i++)
 *       if (pk_u64map_used(m, i)) ... pk_u64map_key(m, i), pk_u64map_val(m, i) */
static inline size_t pk_u64map_end(const pk_u64map *m) { return m->cap + 1; }
static inline bool pk_u64map_used(const pk_u64map *m, size_t i)
{
    return i < m->cap ? m->e[i].key != 0 : m->has_zero;
}
static inline uint64_t pk_u64map_key(const pk_u64map *m, size_t i) { return i < m->cap ? m->e[i].key : 0; }
static inline uint64_t pk_u64map_val(const pk_u64map *m, size_t i) { return i < m->cap ? m->e[i].val : m->zero_val; }
static inline uint64_t *pk_u64map_valp(pk_u64map *m, size_t i) { return i < m->cap ? &m->e[i].val : &m->zero_val; }


/* ---- u64 key → list of fixed-size elements (a multimap, e.g. a function →
 * its call edges). A zeroed struct with `elem` set is empty. ---- */
typedef struct pk_listmap {
    pk_u64map index;   /* key → index into lists + 1 */
    pk_vec lists;      /* pk_vec per key */
    size_t elem;
} pk_listmap;

static inline void pk_listmap_init(pk_listmap *m, size_t elem)
{
    memset(m, 0, sizeof *m);
    m->elem = elem;
    pk_vec_init(&m->lists, sizeof(pk_vec));
}
void pk_listmap_free(pk_listmap *m);
/* Appends a zeroed element to key's list; NULL on OOM. */
void *pk_listmap_push(pk_listmap *m, uint64_t key);
/* Key's list, or NULL; valid until the next push (to any key). */
pk_vec *pk_listmap_get(const pk_listmap *m, uint64_t key);

/* ---- bounds-checked cursor over bytes, with LEB128 (DWARF, extbinary,
 * pseudo-probes). A failed read sets `bad` and leaves the cursor at the
 * offending byte, so the caller can report `base_offset + (pos - start)`. ---- */
typedef struct pk_cursor {
    const uint8_t *start, *pos, *end;
    bool bad;
} pk_cursor;

static inline void pk_cursor_init(pk_cursor *c, const void *data, size_t size)
{
    c->start = c->pos = data;
    /* an empty section has no data at all (NULL): NULL + 0 is undefined */
    c->end = size ? c->start + size : c->start;
    c->bad = false;
}
static inline size_t pk_cursor_offset(const pk_cursor *c) { return (size_t)(c->pos - c->start); }
static inline size_t pk_cursor_left(const pk_cursor *c) { return (size_t)(c->end - c->pos); }
static inline bool pk_cursor_need(pk_cursor *c, size_t n)
{
    if (c->bad || (size_t)(c->end - c->pos) < n) {
        c->bad = true;
        return false;
    }
    return true;
}
static inline uint8_t pk_cursor_u8(pk_cursor *c) { return pk_cursor_need(c, 1) ? *c->pos++ : 0; }
static inline uint16_t pk_cursor_u16(pk_cursor *c)
{ if (!pk_cursor_need(c, 2)) return 0; uint16_t v = pk_ld16(c->pos); c->pos += 2; return v; }
static inline uint32_t pk_cursor_u32(pk_cursor *c)
{ if (!pk_cursor_need(c, 4)) return 0; uint32_t v = pk_ld32(c->pos); c->pos += 4; return v; }
static inline uint64_t pk_cursor_u64(pk_cursor *c)
{ if (!pk_cursor_need(c, 8)) return 0; uint64_t v = pk_ld64(c->pos); c->pos += 8; return v; }
static inline const uint8_t *pk_cursor_bytes(pk_cursor *c, size_t n)
{ if (!pk_cursor_need(c, n)) return NULL; const uint8_t *p = c->pos; c->pos += n; return p; }
/* ULEB128/SLEB128 of at most 10 bytes; longer or truncated encodings set bad. */
uint64_t pk_cursor_uleb(pk_cursor *c);
int64_t pk_cursor_sleb(pk_cursor *c);

#endif
