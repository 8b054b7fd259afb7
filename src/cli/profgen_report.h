/* profgen_report.h — what `pgokit profgen` says on stderr after a run:
 * the samples and what became of them (LBR or IP, flow inference, the
 * unwinder's and the tail-call inference's counters) and what it wrote
 * (profiles, pre-inliner, compilation units). */
#ifndef PK_CLI_PROFGEN_REPORT_H
#define PK_CLI_PROFGEN_REPORT_H

#include "profgen/pipeline.h"

/* The samples: how many were read and used, and for IP samples what the
 * stacks and flow inference gave. */
void pk_profgen_print_summary(const pk_pipeline_report *rep);
/* Calling contexts: the unwinder's counters and the tail-call frames. */
void pk_profgen_print_unwind(const pk_pipeline_report *rep);
/* The output: its kind, profiles and totals, the pre-inliner's decisions. */
void pk_profgen_print_written(const pk_pipeline_request *rq, const pk_pipeline_report *rep);

#endif
