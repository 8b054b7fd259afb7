/* profgen_dumps.c — see profgen_dumps.h. The llvm-profgen wordings are its
 * texts as its own lit tests check them (llvm/test/tools/llvm-profgen), so
 * that those checks run unchanged on `pgokit llvm-profgen`. */
#include "cli/profgen_dumps.h"
#include "cli/cli.h"

#include <inttypes.h>
#include <string.h>

/* A context as llvm-profgen's SampleContext prints it: "main:9 @ _Z3fooi"
 * (outermost first; a location is line or line.discriminator). */
static void put_context(FILE *f, const pk_profset *ps, const pk_preinline_step *st)
{
    for (size_t i = 0; i < st->nframes; i++) {
        const pk_ctx_frame *fr = &st->frames[i];
        fprintf(f, "%s%.*s", i ? " @ " : "", (int)pk_profset_name_len(ps, fr->name), pk_profset_name(ps, fr->name));
        if (i + 1 < st->nframes)
            fprintf(f, fr->disc ? ":%u.%u" : ":%u", fr->line, fr->disc);
    }
}

/* pgokit's trace: one tab-separated line per step (what, count, size,
 * threshold, the function's size so far/limit, the context). */
static void put_step_pgokit(FILE *f, const pk_profset *ps, const pk_preinline_step *st)
{
    static const char *what[] = {"function", "inline", "keep-call", "over-limit", "other-unit"};
    if (st->what == PK_PI_FUNCTION)
        fprintf(f, "%s\t%llu\t%u\t-\t%llu/%llu\t", what[st->what], (unsigned long long)st->count, st->size,
                (unsigned long long)st->final_size, (unsigned long long)st->limit);
    else
        fprintf(f, "%s\t%llu\t%u\t%.0f\t%llu/%llu\t", what[st->what], (unsigned long long)st->count, st->size,
                st->threshold, (unsigned long long)st->final_size, (unsigned long long)st->limit);
    put_context(f, ps, st);
    fputc('\n', f);
}

/* llvm-profgen's CSPreInliner debug output (--debug-only=cs-preinliner). */
static void put_step_llvm(pk_preinline_printer *p, const pk_profset *ps, const pk_preinline_step *st)
{
    FILE *f = p->f;
    switch (st->what) {
    case PK_PI_FUNCTION:
        p->func_size = st->size;
        p->over_limit_said = false;
        fputs("Process ", f);
        put_context(f, ps, st);
        fprintf(f, " for context-sensitive pre-inlining (pre-inline size: %u, size limit: %llu)\n", st->size,
                (unsigned long long)st->limit);
        break;
    case PK_PI_INLINE:
    case PK_PI_KEEP_CALL:
    case PK_PI_OTHER_UNIT:
        fprintf(f, "  %s context profile for: ", st->what == PK_PI_INLINE ? "Inlined" : "Outlined");
        put_context(f, ps, st);
        fprintf(f, " (callee size: %u, call count:%llu)\n", st->size, (unsigned long long)st->count);
        break;
    case PK_PI_OVER_LIMIT:
        if (!p->over_limit_said)
            fprintf(f, "  Inline candidates ignored due to size limit (inliner original size: %llu, inliner final "
                    "size: %llu, size limit: %llu)\n", (unsigned long long)p->func_size,
                    (unsigned long long)st->final_size, (unsigned long long)st->limit);
        p->over_limit_said = true;
        fputs("    ", f);
        put_context(f, ps, st);
        fprintf(f, " (candidate size:%u, call count: %llu, previously %s)\n", st->size,
                (unsigned long long)st->count, st->was_inlined ? "inlined" : "not inlined");
        break;
    }
}

void pk_print_preinline_step(pk_preinline_printer *p, const pk_profset *ps, const pk_preinline_step *st)
{
    if (p->llvm)
        put_step_llvm(p, ps, st);
    else
        put_step_pgokit(p->f, ps, st);
}

void pk_print_mmap_event(FILE *f, const pk_mmap_event *m)
{
    char line[4200];
    int n = snprintf(line, sizeof line, "Mmap: Binary %s loaded at 0x%" PRIx64 ": \n", m->filename ? m->filename : "",
                     m->addr);
    if (n >= (int)sizeof line) { /* a name too long for the line: cut, the line still ends */
        n = (int)sizeof line - 1;
        line[n - 1] = '\n';
    }
    if (n > 0)
        pk_cli_put_lines(f, line, (size_t)n);
}

void pk_print_bad_return(FILE *f, uint64_t addr)
{
    fprintf(f, "profgen: warning: Truncated stack sample due to invalid return address at 0x%" PRIx64
            ", likely caused by frame pointer omission\n", addr);
}
