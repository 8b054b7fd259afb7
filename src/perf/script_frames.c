/* script_frames.c — file-relative call-chain addresses of `perf script`
 * text made absolute again (see script_frames.h for the why).
 *
 * Mappings are kept in the order their lines came, each with its process;
 * a later mapping of the same process over the same addresses retires the
 * older ones (an exec, a re-mapping). A handful of mappings per process is
 * the rule, so lookups scan them newest first; the last hit is tried first,
 * since a branch stack mostly runs in one file.
 */
#include "perf/script_frames.h"

#include <stdlib.h>

typedef struct smap {
    uint64_t start, end, pgoff;  /* [start, end) at file offset pgoff */
    uint32_t pid;
    uint32_t name;               /* name id (index + 1) */
    bool exec;                   /* executable, or the line did not say */
    bool dead;                   /* replaced by a later mapping of the same process */
} smap;

typedef struct sname {
    uint64_t hash;
    char *s;
    size_t len;
    bool mapped;                 /* some mmap line has this name */
} sname;

enum { MODE_UNKNOWN, MODE_ABS, MODE_REL };

/* Kernel addresses (the upper half) are printed as they are by every perf. */
#define KERNEL_HALF 0xffff800000000000ull
/* The sample's ip is the newest branch's target, or (hardware) a few
 * instructions after it: within a page. */
#define LEAF_SLACK 4096u
#define MAX_CANDS 8

struct pk_sframes {
    pk_vec maps;                 /* smap */
    pk_vec names;                /* sname */
    pk_u64map by_hash;           /* name hash → id (first name with that hash) */
    pk_u64map live;              /* pid → live mappings */
    int mode;                    /* what the last sample with evidence showed */
    size_t last_hit;             /* index + 1 of the last absolute lookup's mapping */
    uint32_t lbr_maps[MAX_CANDS];/* this sample: mappings its branch stack ran in (index + 1) */
    size_t nlbr_maps;
    bool lbr_done;
};

typedef struct view {
    bool pid_only;
    uint32_t pid;
} view;

pk_sframes *pk_sframes_new(void)
{
    pk_sframes *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    pk_vec_init(&f->maps, sizeof(smap));
    pk_vec_init(&f->names, sizeof(sname));
    return f;
}

void pk_sframes_free(pk_sframes *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->names.len; i++)
        free(PK_VEC_AT(&f->names, sname, i).s);
    pk_vec_free(&f->names);
    pk_vec_free(&f->maps);
    pk_u64map_free(&f->by_hash);
    pk_u64map_free(&f->live);
    free(f);
}

uint32_t pk_sframes_name(pk_sframes *f, const char *name, size_t len)
{
    uint64_t h = pk_hash_bytes(name, len);
    uint64_t *v = pk_u64map_get(&f->by_hash, h);
    if (v) {
        const sname *n = &PK_VEC_AT(&f->names, sname, *v - 1);
        if (n->len == len && !memcmp(n->s, name, len))
            return (uint32_t)*v;
        /* a 64-bit hash collision: look through every name */
        for (size_t i = 0; i < f->names.len; i++) {
            n = &PK_VEC_AT(&f->names, sname, i);
            if (n->hash == h && n->len == len && !memcmp(n->s, name, len))
                return (uint32_t)(i + 1);
        }
    }
    if (f->names.len >= UINT32_MAX - 1)
        return 0;
    char *s = malloc(len + 1);
    sname *n = s ? pk_vec_push(&f->names) : NULL;
    if (!n) {
        free(s);
        return 0;
    }
    memcpy(s, name, len);
    s[len] = 0;
    *n = (sname){h, s, len, false};
    uint32_t id = (uint32_t)f->names.len;
    if (!v) {
        uint64_t *slot = pk_u64map_slot(&f->by_hash, h);
        if (!slot)
            return 0;
        *slot = id;
    }
    return id;
}

int pk_sframes_mmap(pk_sframes *f, const pk_mmap_event *m)
{
    if (!m->len || m->addr + m->len < m->addr)
        return 0;
    const char *fn = m->filename ? m->filename : "";
    uint32_t id = pk_sframes_name(f, fn, strlen(fn));
    if (!id)
        return -1;
    PK_VEC_AT(&f->names, sname, id - 1).mapped = true;
    uint64_t *live = pk_u64map_slot(&f->live, m->pid);
    if (!live)
        return -1;
    for (size_t i = 0; i < f->maps.len; i++) {
        smap *o = &PK_VEC_AT(&f->maps, smap, i);
        if (!o->dead && o->pid == m->pid && o->start < m->addr + m->len && m->addr < o->end) {
            o->dead = true;
            (*live)--;
        }
    }
    smap *n = pk_vec_push(&f->maps);
    if (!n)
        return -1;
    *n = (smap){m->addr, m->addr + m->len, m->pgoff, m->pid, id, !m->prot || (m->prot & 4), false};
    (*live)++;
    f->last_hit = 0;
    return 0;
}

static inline bool in_view(const smap *m, const view *v)
{
    return !m->dead && (!v->pid_only || m->pid == v->pid);
}

/* The mapping holding runtime address a (index + 1), 0 if none; name: only
 * mappings of that file (0: any). */
static size_t abs_lookup(pk_sframes *f, const view *v, uint64_t a, uint32_t name)
{
    const smap *ms = f->maps.data;
    if (f->last_hit) {
        const smap *m = &ms[f->last_hit - 1];
        if (a - m->start < m->end - m->start && in_view(m, v) && (!name || m->name == name))
            return f->last_hit;
    }
    for (size_t i = f->maps.len; i-- > 0;) {
        const smap *m = &ms[i];
        if (a - m->start < m->end - m->start && in_view(m, v) && (!name || m->name == name))
            return f->last_hit = i + 1;
    }
    return 0;
}

/* The mappings the sample's branch stack ran in, once per sample. */
static void lbr_maps(pk_sframes *f, const view *v, const pk_branch *lbr, size_t nlbr)
{
    if (f->lbr_done)
        return;
    f->lbr_done = true;
    f->nlbr_maps = 0;
    for (size_t i = 0; i < 2 * nlbr; i++) {
        size_t k = abs_lookup(f, v, i & 1 ? lbr[i / 2].to : lbr[i / 2].from, 0);
        if (!k)
            continue;
        size_t j = 0;
        while (j < f->nlbr_maps && f->lbr_maps[j] != k)
            j++;
        if (j == f->nlbr_maps && f->nlbr_maps < MAX_CANDS)
            f->lbr_maps[f->nlbr_maps++] = (uint32_t)k;
    }
}

/* What this sample's leaf says about the form of its call chain. */
static int evidence(pk_sframes *f, const view *v, uint64_t leaf, const pk_branch *lbr, size_t nlbr)
{
    if (!nlbr)
        return MODE_UNKNOWN;
    uint64_t t = lbr[0].to;
    if (leaf - t < LEAF_SLACK)
        return MODE_ABS;
    size_t k = abs_lookup(f, v, t, 0);
    if (k) {
        const smap *m = &PK_VEC_AT(&f->maps, smap, k - 1);
        return leaf - (t - m->start + m->pgoff) < LEAF_SLACK ? MODE_REL : MODE_UNKNOWN;
    }
    /* no mapping at all (no --show-mmap-events): mappings start at page
     * boundaries of their file, so a relative address keeps the page offset */
    if (!f->maps.len && leaf < t && !((leaf ^ t) & 0xfff))
        return MODE_REL;
    return MODE_UNKNOWN;
}

typedef struct cand {
    uint64_t abs;
    uint32_t map;                /* index + 1 */
} cand;

/* One entry x; *prev is the mapping the leafward neighbour was placed in. */
static uint64_t place_one(pk_sframes *f, const view *v, int mode, uint64_t x, uint32_t name,
                          const pk_branch *lbr, size_t nlbr, uint32_t *prev, pk_script_stats *st)
{
    uint32_t here = 0;
    if (x >= KERNEL_HALF)
        goto keep;
    const sname *sn = name ? &PK_VEC_AT(&f->names, sname, name - 1) : NULL;
    if (sn && !sn->mapped) {
        /* a file without an mmap line: "[unknown]" is perf's word for an
         * address in no mapping, printed as it is; any other file's
         * relative address cannot be placed */
        if (mode == MODE_REL && strcmp(sn->s, "[unknown]") != 0) {
            st->frames_unplaced++;
            goto keep;
        }
        if (!abs_lookup(f, v, x, 0))
            st->frames_unmapped++;
        goto keep;
    }
    size_t absmap = abs_lookup(f, v, x, name);
    if (mode == MODE_ABS && !name) {
        here = (uint32_t)absmap;
        if (!absmap)
            st->frames_unmapped++;
        goto keep;
    }
    cand c[MAX_CANDS];
    size_t nc = 0;
    const smap *ms = f->maps.data;
    for (size_t i = f->maps.len; i-- > 0;) {
        const smap *m = &ms[i];
        if (!m->exec || !in_view(m, v) || (name && m->name != name) || x - m->pgoff >= m->end - m->start)
            continue;
        uint64_t a = m->start + (x - m->pgoff);
        size_t j = 0;
        while (j < nc && c[j].abs != a)
            j++;
        if (j == nc && nc < MAX_CANDS)
            c[nc++] = (cand){a, (uint32_t)(i + 1)};
    }
    bool rel;
    if (nc && !absmap)
        rel = true;
    else if (!nc && absmap)
        rel = false;
    else if (!nc) {
        if (mode == MODE_REL && !f->maps.len)
            st->frames_unplaced++;     /* no mmap lines to place it with */
        else
            st->frames_unmapped++;
        goto keep;
    } else {
        /* fits both ways: the form of the sample decides; a line naming
         * its file is perf 6.1's, which prints relative addresses */
        rel = mode == MODE_REL || (mode == MODE_UNKNOWN && name);
    }
    if (!rel) {
        here = (uint32_t)absmap;
        goto keep;
    }
    st->frames_rebased++;
    st->relative = true;
    size_t pick = 0;
    if (nc > 1) {
        /* several files hold this offset: prefer those the sample's
         * branches ran in, then the neighbour frame's, then the newest */
        st->frames_guessed++;
        lbr_maps(f, v, lbr, nlbr);
        size_t in_lbr[MAX_CANDS], n_in = 0;
        for (size_t i = 0; i < nc; i++)
            for (size_t j = 0; j < f->nlbr_maps; j++)
                if (f->lbr_maps[j] == c[i].map) {
                    in_lbr[n_in++] = i;
                    break;
                }
        if (n_in)
            pick = in_lbr[0];
        st->frames_guessed_lbr += n_in == 1;
        bool found = false;
        for (size_t i = 0; i < (n_in ? n_in : nc) && !found; i++) {
            size_t k = n_in ? in_lbr[i] : i;
            if (c[k].map == *prev) {
                pick = k;
                found = true;
            }
        }
    }
    *prev = c[pick].map;
    return c[pick].abs;
keep:
    *prev = here;
    return x;
}

void pk_sframes_place(pk_sframes *f, int64_t pid, uint64_t *frames, const uint32_t *names, size_t n,
                      const pk_branch *lbr, size_t nlbr, pk_script_stats *st)
{
    if (!n)
        return;
    view v = {false, 0};
    if (pid >= 0) {
        const uint64_t *live = pk_u64map_get(&f->live, (uint64_t)pid & 0xffffffffu);
        if (live && *live) {
            v.pid_only = true;
            v.pid = (uint32_t)pid;
        }
    }
    st->frames += n;
    f->lbr_done = false;
    int mode = evidence(f, &v, frames[0], lbr, nlbr);
    if (mode)
        f->mode = mode;
    else
        mode = f->mode;
    uint32_t prev = 0;
    for (size_t i = 0; i < n; i++)
        frames[i] = place_one(f, &v, mode, frames[i], names ? names[i] : 0, lbr, nlbr, &prev, st);
}
