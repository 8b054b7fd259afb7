/* layout_mktemporal — test helper: turns plain-text traces (one trace per
 * line, names separated by blanks) into a pgokit indexed temporal profile
 * through the src/temporal API, so `pgokit order` can be tested on the
 * profile format it reads in production.
 * usage: layout_mktemporal TRACES.txt OUT.pgotemporal */
#include "layout/layout.h"
#include "temporal/temporal.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s TRACES OUT\n", argv[0]);
        return 2;
    }
    pk_err err;
    pk_layout_names names;
    pk_layout_trace_set set;
    if (pk_layout_names_init(&names, &err) || pk_layout_read_text_traces(argv[1], &names, &set, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    pk_temporal_profile p;
    pk_temporal_init(&p, 0, 0);
    for (size_t i = 0; i < names.n; i++) {
        const char *n = pk_layout_name(&names, i);
        if (pk_temporal_intern(&p, n, n, 0x1000 + 16 * i, 0, 0, &err) != (int64_t)i) {
            fprintf(stderr, "intern: %s\n", err.msg);
            return 1;
        }
    }
    for (size_t t = 0; t < set.traces.len; t++) {
        const pk_layout_trace *tr = &PK_VEC_AT(&set.traces, pk_layout_trace, t);
        if (pk_temporal_add_trace(&p, tr->funcs, (uint32_t)tr->len, tr->weight, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        for (size_t i = 0; i < tr->len; i++)
            p.funcs[tr->funcs[i]].covered_runs++;
    }
    p.num_runs = set.traces.len;
    if (pk_temporal_write(&p, argv[2], &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    pk_temporal_free(&p);
    pk_layout_trace_set_free(&set);
    pk_layout_names_free(&names);
    return 0;
}
