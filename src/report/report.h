/* report.h — `pgokit report`: one self-contained HTML page about a sample
 * profile, for a person to look at (the machine-readable side is `show
 * --json` and `overlap --json`).
 *
 * The page holds, with no network access needed (inline CSS, JavaScript and
 * SVG; no external fonts, scripts or images):
 *   - the hot functions with their share of the samples;
 *   - an icicle chart of the calling contexts: a CSSPGO profile's contexts
 *     ([main:3 @ foo:2 @ bar] is the path main → foo → bar) and, below each
 *     profile, its inlined callsites (nested profiles);
 *   - the pre-inliner's decisions (how they are derived: report_model.c);
 *   - per-function block overlap against a reference (the exact counts of
 *     the run, or another profile), with the program's figure;
 *   - the source lines of the hottest functions annotated with their counts,
 *     when a binary with DWARF is given and the sources are at hand.
 *
 * The data travels in the page as one JSON document (written by the
 * library's JSON writer, common/json_out.h) that the page's script renders;
 * the page marks its time to first render in the DOM
 * (<body data-render-ms=...>) so a headless browser can read it back.
 *
 * The library builds the page in memory; the caller writes it out.
 */
#ifndef PK_REPORT_H
#define PK_REPORT_H

#include "binary/binary.h"
#include "format/format.h"
#include "profile/profile.h"

typedef struct pk_report_input {
    const pk_profset *ps;         /* the profile */
    const char *profile_path;     /* as the user named it (shown) */
    pk_prof_format format;        /* format it was read in (shown) */
    pk_binary *bin;               /* NULL: no source view, no code sizes */
    const char *binary_path;      /* shown; NULL without bin */
    /* Reference for block overlap (NULL: none): the exact counts' reference
     * profile (profgen/truth.h) or another profile. */
    const pk_profset *ref;
    const char *ref_label;        /* e.g. "exact counts run.exact" */
    size_t top;                   /* rows per table (0: 100) */
    size_t source_functions;      /* functions annotated in the source view (0: 20) */
    /* Source files are shown only from under the compilation directories
     * of the units that name them, or under these (--source-root). */
    const char *const *source_roots;
    size_t nsource_roots;
    const char *title;            /* NULL: "pgokit report: <profile>" */
    bool no_demangle;             /* C++ names as linkage names (default: demangled) */
} pk_report_input;

/* Builds the page into *html (malloc'ed, *len bytes, NUL-terminated). */
int pk_report_build(const pk_report_input *in, char **html, size_t *len, pk_err *err);

#endif
