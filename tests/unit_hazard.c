/* The hazard set: which access pairs need a barrier, merging of adjacent
 * ranges, and the full set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/hazard.h"

static int A, B; /* two buffers, by identity */

static void read_after_read_is_free(void **state)
{
    (void)state;
    hazard_set h;
    hazard_reset(&h);
    assert_true(hazard_add(&h, &A, 0, 64, false));
    assert_false(hazard_conflicts(&h, &A, 0, 64, true, false));
}

static void every_pair_with_a_write_conflicts(void **state)
{
    (void)state;
    hazard_set h;
    hazard_reset(&h);
    assert_true(hazard_add(&h, &A, 0, 64, true));
    assert_true(hazard_conflicts(&h, &A, 32, 40, true, false));  /* RAW */
    assert_true(hazard_conflicts(&h, &A, 60, 100, false, true)); /* WAW */
    hazard_reset(&h);
    assert_true(hazard_add(&h, &A, 0, 64, false));
    assert_true(hazard_conflicts(&h, &A, 63, 64, false, true)); /* WAR */
}

static void disjoint_ranges_and_buffers_are_free(void **state)
{
    (void)state;
    hazard_set h;
    hazard_reset(&h);
    assert_true(hazard_add(&h, &A, 0, 64, true));
    assert_false(hazard_conflicts(&h, &A, 64, 128, true, true)); /* touching, not overlapping */
    assert_false(hazard_conflicts(&h, &B, 0, 64, true, true));
    assert_false(hazard_conflicts(&h, &A, 0, 64, false, false)); /* no access at all */
}

static void adjacent_ranges_merge(void **state)
{
    (void)state;
    hazard_set h;
    hazard_reset(&h);
    for (uint64_t i = 0; i < 1000; i++)
        assert_true(hazard_add(&h, &A, i * 16, i * 16 + 16, true));
    assert_int_equal(h.count, 1);
    assert_int_equal(h.r[0].begin, 0);
    assert_int_equal(h.r[0].end, 16000);
    /* a read of the same range is a separate entry */
    assert_true(hazard_add(&h, &A, 0, 16, false));
    assert_int_equal(h.count, 2);
}

static void a_full_set_refuses(void **state)
{
    (void)state;
    hazard_set h;
    hazard_reset(&h);
    for (uint64_t i = 0; i < HAZARD_MAX; i++)
        assert_true(hazard_add(&h, &A, i * 32, i * 32 + 16, true)); /* gaps: no merging */
    assert_false(hazard_add(&h, &A, 10000, 10016, true));
    assert_int_equal(h.count, HAZARD_MAX);
    /* merging still works when full */
    assert_true(hazard_add(&h, &A, 16, 32, true));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_after_read_is_free),
        cmocka_unit_test(every_pair_with_a_write_conflicts),
        cmocka_unit_test(disjoint_ranges_and_buffers_are_free),
        cmocka_unit_test(adjacent_ranges_merge),
        cmocka_unit_test(a_full_set_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
