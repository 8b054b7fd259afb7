/* test_block_overlap.c — the block-overlap degree on hand-made profiles. */
#include "test.h"
#include "profile/block_overlap.h"

#include <stdlib.h>

static pk_fprof *func(pk_profset *ps, const char *name)
{
    pk_name_id id;
    pk_err err;
    if (pk_profset_intern(ps, name, strlen(name), &id, &err))
        return NULL;
    return pk_profset_get_func(ps, id, &err);
}

TEST(identical_distributions_overlap_fully_and_weights_follow_the_reference)
{
    pk_profset a, b;
    pk_err err;
    CHECK_OK(pk_profset_init(&a, &err), &err);
    CHECK_OK(pk_profset_init(&b, &err), &err);
    pk_fprof *fa = func(&a, "f"), *ga = func(&a, "g");
    pk_fprof *fb = func(&b, "f"), *gb = func(&b, "g");
    /* f: same shape at a different scale; g: disjoint locations */
    pk_fprof_add_body(fa, 1, 0, 10, &err);
    pk_fprof_add_body(fa, 2, 0, 30, &err);
    pk_fprof_add_body(fb, 1, 0, 100, &err);
    pk_fprof_add_body(fb, 2, 0, 300, &err);
    pk_fprof_add_body(ga, 1, 0, 5, &err);
    pk_fprof_add_body(gb, 2, 0, 100, &err);
    pk_block_overlap o;
    CHECK_OK(pk_profset_block_overlap(&a, &b, &o, &err), &err);
    /* reference weights: f 400/500, g 100/500; overlaps 1 and 0 */
    CHECK(o.overlap > 0.7999 && o.overlap < 0.8001);
    CHECK_EQ_U64(o.ref_functions, 2);
    CHECK_EQ_U64(o.common_functions, 2);
    pk_profset_free(&a);
    pk_profset_free(&b);
}

TEST(inlined_instances_fold_into_their_function)
{
    pk_profset a, b;
    pk_err err;
    CHECK_OK(pk_profset_init(&a, &err), &err);
    CHECK_OK(pk_profset_init(&b, &err), &err);
    pk_fprof *main_a = func(&a, "main"), *h = func(&b, "h");
    pk_name_id hn;
    CHECK_OK(pk_profset_intern(&a, "h", 1, &hn, &err), &err);
    pk_fprof *h_in_main = pk_fprof_callsite(&a, main_a, 3, 0, hn, &err);
    CHECK(h_in_main != NULL);
    pk_fprof_add_body(h_in_main, 1, 0, 7, &err);
    pk_fprof_add_body(h, 1, 0, 70, &err);
    pk_block_overlap o;
    CHECK_OK(pk_profset_block_overlap(&a, &b, &o, &err), &err);
    CHECK(o.overlap > 0.9999);
    pk_profset_free(&a);
    pk_profset_free(&b);
}

TEST(per_function_rows_add_up_to_the_program_overlap)
{
    pk_profset a, b;
    pk_err err;
    CHECK_OK(pk_profset_init(&a, &err), &err);
    CHECK_OK(pk_profset_init(&b, &err), &err);
    pk_fprof *fa = func(&a, "f"), *fb = func(&b, "f"), *gb = func(&b, "g");
    /* f: test 1:1 against reference 1:3 → overlap 0.25 + 0.5 = 0.75;
     * g: only in the reference */
    pk_fprof_add_body(fa, 1, 0, 50, &err);
    pk_fprof_add_body(fa, 2, 0, 50, &err);
    pk_fprof_add_body(fb, 1, 0, 100, &err);
    pk_fprof_add_body(fb, 2, 0, 300, &err);
    pk_fprof_add_body(gb, 1, 0, 100, &err);
    pk_block_overlap o;
    pk_block_overlap_func *rows = NULL;
    size_t n = 0;
    CHECK_OK(pk_profset_block_overlap_funcs(&a, &b, &o, &rows, &n, &err), &err);
    CHECK_EQ_U64(n, 2);
    if (n == 2) {
        CHECK_STR(pk_profset_name(&b, rows[0].name), "f"); /* heaviest first */
        CHECK(rows[0].overlap > 0.7499 && rows[0].overlap < 0.7501);
        CHECK(rows[0].weight > 0.7999 && rows[0].weight < 0.8001);
        CHECK_EQ_U64(rows[0].ref_samples, 400);
        CHECK_EQ_U64(rows[0].test_samples, 100);
        CHECK_STR(pk_profset_name(&b, rows[1].name), "g");
        CHECK_EQ_U64(rows[1].test_samples, 0);
        CHECK(rows[1].overlap == 0);
        double sum = rows[0].weight * rows[0].overlap + rows[1].weight * rows[1].overlap;
        CHECK(sum > o.overlap - 1e-9 && sum < o.overlap + 1e-9);
    }
    CHECK(o.overlap > 0.5999 && o.overlap < 0.6001);
    free(rows);
    pk_profset_free(&a);
    pk_profset_free(&b);
}

int main(void) { return pk_test_main(); }
