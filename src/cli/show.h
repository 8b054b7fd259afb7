/* show.h — the parts of `pgokit show` beyond the summary of a sample
 * profile (cmd_show.c parses the options and dispatches on the file kind):
 *   show_views.c   --json (llvm-profdata show --sample --json's layout) and
 *                  --hot-func-list (llvm-profdata's hot function list);
 *   show_files.c   the other files pgokit writes: raw profiles, perf.data and
 *                  pprof samples, exact counts. */
#ifndef PK_CLI_SHOW_H
#define PK_CLI_SHOW_H

#include "common/demangle.h"
#include "profile/profile.h"
#include <stdio.h>

/* Every profile of fs (n, in writer order) as JSON: name, total, head,
 * body (line, discriminator, samples, calls), callsites, as llvm-profdata
 * does; plus "context" for a context-sensitive profile and "checksum" for a
 * probe-based one (fields llvm-profdata leaves out). */
void pk_show_json(FILE *out, const pk_profset *ps, pk_fprof *const *fs, size_t n);
/* llvm-profdata show --hot-func-list: functions whose max sample reaches the
 * 99% cutoff of the summary s, total descending; at most top rows (0: all);
 * names through dm. */
void pk_show_hot_list(FILE *out, const pk_profset *ps, pk_fprof *const *fs, size_t n, const pk_summary *s,
                      size_t top, pk_demangler *dm);

/* The summary of a pgokit raw profile (PKRAWPRF): binary, sample statistics,
 * the `top` hottest branches and ranges (0: all). Exit status. */
int pk_show_rawprof(const char *path, size_t top);
/* The summary of a samples file (perf.data, pprof). */
int pk_show_samples(const char *path, bool pprof);
/* The summary of an exact-counts file. */
int pk_show_exact(const char *path);

#endif
