/*
 * Unit tests of the interval index (logfs/index.c, DESIGN.md section 5).
 *
 * The oracle of the randomized tests is a byte array over a window of the file: model[b] is
 * the log position file byte base + b maps to, or NONE. Because the index keeps no two extents
 * that are contiguous in both file and log, its extents must be exactly the maximal runs of the
 * model (bytes present, each mapping to the log position after its neighbour's); comparing the
 * two checks contents, order, non-overlap, coalescing and count in one go.
 *
 * malloc is wrapped (-Wl,--wrap=malloc in index.mk) so that node allocation can be made to fail.
 *
 * index.mk builds this file twice: test_index against the library (64 extents a leaf, 64
 * children an inner node), and test_index_small with logfs/index.c compiled in at capacity 4,
 * where a few hundred extents already make a tree a dozen levels deep, so that every split,
 * merge, borrow and separator update runs many times under the same oracle. The tests below
 * hold for any capacity of 4 or more; only the memory bound per extent depends on it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bblog_err.h"
#include "bblog_index.h"

#define NONE UINT64_MAX

/* Memory per extent the index guarantees once it holds enough extents to amortise its root. */
#ifndef TEST_MAX_BYTES_PER_EXTENT
#define TEST_MAX_BYTES_PER_EXTENT 64
#endif

/* Fault injection. */

/* MALLOC_BUDGET: malloc_budget more mallocs succeed, then every one fails. */
enum { MALLOC_OK, MALLOC_FAIL, MALLOC_FAIL_HALF, MALLOC_BUDGET };
static int malloc_mode = MALLOC_OK;
static uint64_t malloc_rng = 1;
static unsigned long malloc_budget;
static unsigned long malloc_failures;

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);

void *__wrap_malloc(size_t size)
{
    bool fail = malloc_mode == MALLOC_FAIL;

    if (malloc_mode == MALLOC_FAIL_HALF) {
        malloc_rng = malloc_rng * 6364136223846793005ULL + 1442695040888963407ULL;
        fail = (malloc_rng >> 63) != 0;
    } else if (malloc_mode == MALLOC_BUDGET) {
        fail = malloc_budget == 0;
        malloc_budget -= !fail;
    }
    if (fail) {
        malloc_failures++;
        return NULL;
    }
    return __real_malloc(size);
}

/* Helpers. */

static uint64_t rng_next(uint64_t *s)
{
    /* splitmix64: a fixed seed gives the same sequence everywhere. */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t rng_below(uint64_t *s, uint64_t n)
{
    return rng_next(s) % n;
}

static void assert_sound(const struct bblog_index *idx)
{
    const char *why = bblog_idx_check(idx);

    if (why != NULL)
        fail_msg("index invariant broken: %s", why);
}

static struct bblog_index *new_index(void)
{
    struct bblog_index *idx = NULL;

    assert_int_equal(bblog_idx_create(&idx), 0);
    assert_non_null(idx);
    return idx;
}

/* Asserts that iterating [off, off + len) yields exactly exp[0..n). */
static void expect_iter(const struct bblog_index *idx, uint64_t off, uint64_t len,
                        const struct bblog_extent *exp, size_t n)
{
    struct bblog_idx_iter it;
    struct bblog_extent e;
    size_t i = 0;

    bblog_idx_iter_init(idx, &it, off, len);
    while (bblog_idx_iter_next(&it, &e)) {
        if (i >= n)
            fail_msg("extra extent [%llu, +%llu) @%llu", (unsigned long long)e.off,
                     (unsigned long long)e.len, (unsigned long long)e.log_off);
        assert_int_equal(e.off, exp[i].off);
        assert_int_equal(e.len, exp[i].len);
        assert_int_equal(e.log_off, exp[i].log_off);
        i++;
    }
    assert_int_equal(i, n);
    /* Once done, an iterator stays done. */
    assert_false(bblog_idx_iter_next(&it, &e));
}

static void expect_all(const struct bblog_index *idx, const struct bblog_extent *exp, size_t n)
{
    uint64_t bytes = 0;
    size_t i;

    expect_iter(idx, 0, UINT64_MAX, exp, n);
    for (i = 0; i < n; i++)
        bytes += exp[i].len;
    assert_int_equal(bblog_idx_count(idx), n);
    assert_int_equal(bblog_idx_bytes(idx), bytes);
    assert_int_equal(bblog_idx_end(idx), n ? exp[n - 1].off + exp[n - 1].len : 0);
    assert_sound(idx);
}

#define EXPECT_ALL(idx, ...)                                                    \
    do {                                                                        \
        const struct bblog_extent exp_[] = {__VA_ARGS__};                       \
        expect_all((idx), exp_, sizeof(exp_) / sizeof(exp_[0]));               \
    } while (0)

#define X(o, l, g) {.off = (o), .len = (l), .log_off = (g)}

/* Everything the index holds, for before/after comparisons. */
struct snapshot {
    struct bblog_extent *e;
    size_t n;
    uint64_t bytes, end;
    size_t memory;
};

static void take_snapshot(const struct bblog_index *idx, struct snapshot *s)
{
    struct bblog_idx_iter it;
    size_t i = 0;

    s->n = bblog_idx_count(idx);
    s->e = calloc(s->n + 1, sizeof(*s->e));
    assert_non_null(s->e);
    bblog_idx_iter_init(idx, &it, 0, UINT64_MAX);
    while (i <= s->n && bblog_idx_iter_next(&it, &s->e[i]))
        i++;
    assert_int_equal(i, s->n);
    s->bytes = bblog_idx_bytes(idx);
    s->end = bblog_idx_end(idx);
    s->memory = bblog_idx_memory(idx);
}

static void expect_snapshot(const struct bblog_index *idx, struct snapshot *s)
{
    expect_all(idx, s->e, s->n);
    assert_int_equal(bblog_idx_bytes(idx), s->bytes);
    assert_int_equal(bblog_idx_end(idx), s->end);
    assert_int_equal(bblog_idx_memory(idx), s->memory);
    free(s->e);
    s->e = NULL;
}

/* Directed tests. */

static void test_empty(void **state)
{
    struct bblog_index *idx = new_index();
    struct bblog_idx_iter it;
    struct bblog_extent e;

    expect_all(idx, NULL, 0);
    bblog_idx_iter_init(idx, &it, 12345, 1);
    assert_false(bblog_idx_iter_next(&it, &e));
    assert_int_equal(bblog_idx_remove(idx, 0, UINT64_MAX), 0);
    assert_int_equal(bblog_idx_insert(idx, 10, 0, 99), 0);      /* len 0: no-op */
    expect_all(idx, NULL, 0);
    bblog_idx_clear(idx);
    expect_all(idx, NULL, 0);
    bblog_idx_destroy(idx);
    bblog_idx_destroy(NULL);
}

static void test_exact_overwrite(void **state)
{
    struct bblog_index *idx = new_index();

    assert_int_equal(bblog_idx_insert(idx, 100, 100, 0), 0);
    assert_int_equal(bblog_idx_insert(idx, 100, 100, 1000), 0);
    EXPECT_ALL(idx, X(100, 100, 1000));
    /* Overwriting with the same mapping changes nothing. */
    assert_int_equal(bblog_idx_insert(idx, 100, 100, 1000), 0);
    assert_int_equal(bblog_idx_insert(idx, 120, 30, 1020), 0);
    EXPECT_ALL(idx, X(100, 100, 1000));
    bblog_idx_destroy(idx);
}

static void test_split_middle(void **state)
{
    struct bblog_index *idx = new_index();

    assert_int_equal(bblog_idx_insert(idx, 0, 300, 0), 0);
    assert_int_equal(bblog_idx_insert(idx, 100, 100, 1000), 0);
    EXPECT_ALL(idx, X(0, 100, 0), X(100, 100, 1000), X(200, 100, 200));
    /* Head and tail overlaps trim the older extents. */
    assert_int_equal(bblog_idx_insert(idx, 50, 100, 2000), 0);
    EXPECT_ALL(idx, X(0, 50, 0), X(50, 100, 2000), X(150, 50, 1050), X(200, 100, 200));
    assert_int_equal(bblog_idx_insert(idx, 180, 40, 3000), 0);
    EXPECT_ALL(idx, X(0, 50, 0), X(50, 100, 2000), X(150, 30, 1050), X(180, 40, 3000),
               X(220, 80, 220));
    bblog_idx_destroy(idx);
}

static void test_cover_many(void **state)
{
    struct bblog_index *idx = new_index();
    uint64_t i;

    for (i = 0; i < 10; i++)
        assert_int_equal(bblog_idx_insert(idx, i * 100, 50, i * 1000), 0);
    assert_int_equal(bblog_idx_count(idx), 10);
    /* Cuts the tail of the first, swallows eight, cuts the head of the last. */
    assert_int_equal(bblog_idx_insert(idx, 25, 900, 50000), 0);
    EXPECT_ALL(idx, X(0, 25, 0), X(25, 900, 50000), X(925, 25, 9025));
    /* Covering everything leaves one extent. */
    assert_int_equal(bblog_idx_insert(idx, 0, 2000, 7), 0);
    EXPECT_ALL(idx, X(0, 2000, 7));
    bblog_idx_destroy(idx);
}

static void test_coalesce(void **state)
{
    struct bblog_index *idx = new_index();

    /* Joins the left neighbour. */
    assert_int_equal(bblog_idx_insert(idx, 0, 100, 0), 0);
    assert_int_equal(bblog_idx_insert(idx, 100, 100, 100), 0);
    EXPECT_ALL(idx, X(0, 200, 0));
    /* Joins the right neighbour. */
    assert_int_equal(bblog_idx_insert(idx, 400, 100, 400), 0);
    assert_int_equal(bblog_idx_insert(idx, 300, 100, 300), 0);
    EXPECT_ALL(idx, X(0, 200, 0), X(300, 200, 300));
    /* Joins both: three become one. */
    assert_int_equal(bblog_idx_insert(idx, 200, 100, 200), 0);
    EXPECT_ALL(idx, X(0, 500, 0));
    /* Adjacent in the file only, or in the log only: no join. */
    assert_int_equal(bblog_idx_insert(idx, 500, 10, 9000), 0);
    assert_int_equal(bblog_idx_insert(idx, 520, 10, 9010), 0);
    EXPECT_ALL(idx, X(0, 500, 0), X(500, 10, 9000), X(520, 10, 9010));
    /* A write overlapping its left neighbour that continues it in the log extends it. */
    assert_int_equal(bblog_idx_insert(idx, 505, 10, 9005), 0);
    EXPECT_ALL(idx, X(0, 500, 0), X(500, 15, 9000), X(520, 10, 9010));
    /* A write whose tail lands on the trimmed head of an extent and continues it joins it. */
    assert_int_equal(bblog_idx_insert(idx, 1000, 100, 5000), 0);
    assert_int_equal(bblog_idx_insert(idx, 990, 20, 5000 - 10 + 1000), 0);
    EXPECT_ALL(idx, X(0, 500, 0), X(500, 15, 9000), X(520, 10, 9010), X(990, 20, 5990),
               X(1010, 90, 5010));
    assert_int_equal(bblog_idx_insert(idx, 980, 30, 4980), 0);
    EXPECT_ALL(idx, X(0, 500, 0), X(500, 15, 9000), X(520, 10, 9010), X(980, 120, 4980));
    bblog_idx_destroy(idx);
}

static void test_remove(void **state)
{
    struct bblog_index *idx = new_index();
    uint64_t i;

    assert_int_equal(bblog_idx_insert(idx, 0, 1000, 0), 0);
    assert_int_equal(bblog_idx_remove(idx, 100, 0), 0);        /* len 0: no-op */
    EXPECT_ALL(idx, X(0, 1000, 0));
    assert_int_equal(bblog_idx_remove(idx, 100, 100), 0);      /* punches a hole */
    EXPECT_ALL(idx, X(0, 100, 0), X(200, 800, 200));
    assert_int_equal(bblog_idx_remove(idx, 50, 200), 0);       /* cuts tail and head */
    EXPECT_ALL(idx, X(0, 50, 0), X(250, 750, 250));
    assert_int_equal(bblog_idx_remove(idx, 0, 50), 0);         /* exactly one */
    EXPECT_ALL(idx, X(250, 750, 250));
    assert_int_equal(bblog_idx_remove(idx, 900, UINT64_MAX), 0);   /* to the end */
    EXPECT_ALL(idx, X(250, 650, 250));
    for (i = 0; i < 20; i++)
        assert_int_equal(bblog_idx_insert(idx, 2000 + i * 10, 5, i * 100), 0);
    assert_int_equal(bblog_idx_remove(idx, 240, 2092 - 240), 0);       /* many */
    EXPECT_ALL(idx, X(2092, 3, 902), X(2100, 5, 1000), X(2110, 5, 1100), X(2120, 5, 1200),
               X(2130, 5, 1300), X(2140, 5, 1400), X(2150, 5, 1500), X(2160, 5, 1600),
               X(2170, 5, 1700), X(2180, 5, 1800), X(2190, 5, 1900));
    assert_int_equal(bblog_idx_remove(idx, 0, UINT64_MAX), 0);
    expect_all(idx, NULL, 0);
    bblog_idx_destroy(idx);
}

static void test_iter_clip(void **state)
{
    struct bblog_index *idx = new_index();

    assert_int_equal(bblog_idx_insert(idx, 100, 100, 1000), 0);
    assert_int_equal(bblog_idx_insert(idx, 300, 100, 5000), 0);
    {
        const struct bblog_extent e[] = {X(150, 20, 1050)};
        expect_iter(idx, 150, 20, e, 1);
    }
    {
        const struct bblog_extent e[] = {X(100, 50, 1000)};
        expect_iter(idx, 50, 100, e, 1);
    }
    {
        const struct bblog_extent e[] = {X(150, 50, 1050), X(300, 10, 5000)};
        expect_iter(idx, 150, 160, e, 2);
    }
    {
        const struct bblog_extent e[] = {X(199, 1, 1099), X(300, 100, 5000)};
        expect_iter(idx, 199, UINT64_MAX, e, 2);           /* to the end */
        expect_iter(idx, 199, UINT64_MAX - 199, e, 2);
        expect_iter(idx, 199, UINT64_MAX - 200, e, 2);     /* one short of the end */
    }
    expect_iter(idx, 200, 100, NULL, 0);                    /* the gap */
    expect_iter(idx, 0, 100, NULL, 0);                      /* touches, half-open */
    expect_iter(idx, 400, UINT64_MAX, NULL, 0);
    expect_iter(idx, 150, 0, NULL, 0);                      /* empty range */
    expect_iter(idx, UINT64_MAX, UINT64_MAX, NULL, 0);
    bblog_idx_destroy(idx);
}

static void test_bounds(void **state)
{
    struct bblog_index *idx = new_index();
    const uint64_t top = UINT64_MAX;

    assert_int_equal(bblog_idx_insert(idx, top - 100, 100, 0), 0);
    EXPECT_ALL(idx, X(top - 100, 100, 0));
    assert_int_equal(bblog_idx_end(idx), top);
    /* Ends past 2^64 - 1, in the file or the log, are refused and change nothing. */
    assert_int_equal(bblog_idx_insert(idx, top - 100, 101, 0), BBLOG_EINVAL);
    assert_int_equal(bblog_idx_insert(idx, top, 1, 0), BBLOG_EINVAL);
    assert_int_equal(bblog_idx_insert(idx, 0, 10, top - 5), BBLOG_EINVAL);
    assert_int_equal(bblog_idx_insert(idx, 0, top, 1), BBLOG_EINVAL);
    EXPECT_ALL(idx, X(top - 100, 100, 0));
    /* The largest extent possible, and log positions at the top. */
    assert_int_equal(bblog_idx_insert(idx, 0, top, 0), 0);
    EXPECT_ALL(idx, X(0, top, 0));
    assert_int_equal(bblog_idx_insert(idx, top - 10, 10, top - 10), 0);
    EXPECT_ALL(idx, X(0, top, 0));                          /* same mapping */
    assert_int_equal(bblog_idx_insert(idx, top - 10, 5, top - 5), 0);
    EXPECT_ALL(idx, X(0, top - 10, 0), X(top - 10, 5, top - 5), X(top - 5, 5, top - 5));
    {
        const struct bblog_extent e[] = {X(top - 7, 2, top - 2), X(top - 5, 5, top - 5)};
        expect_iter(idx, top - 7, UINT64_MAX, e, 2);
    }
    assert_int_equal(bblog_idx_remove(idx, top - 3, UINT64_MAX), 0);
    EXPECT_ALL(idx, X(0, top - 10, 0), X(top - 10, 5, top - 5), X(top - 5, 2, top - 5));
    assert_int_equal(bblog_idx_remove(idx, 1, top - 2), 0);
    EXPECT_ALL(idx, X(0, 1, 0));
    bblog_idx_destroy(idx);
}

static void test_join_trimmed_head(void **state)
{
    struct bblog_index *idx = new_index();

    /* The new write ends inside an extent it continues in the log: one extent results. */
    assert_int_equal(bblog_idx_insert(idx, 1000, 100, 5000), 0);
    assert_int_equal(bblog_idx_insert(idx, 950, 100, 4950), 0);
    EXPECT_ALL(idx, X(950, 150, 4950));
    /* Same from the left: starts inside an extent it continues. */
    assert_int_equal(bblog_idx_insert(idx, 1050, 100, 5050), 0);
    EXPECT_ALL(idx, X(950, 200, 4950));
    bblog_idx_destroy(idx);
}

static void test_sequential(void **state)
{
    struct bblog_index *idx = new_index();
    const uint64_t n = 1000000, len = 64;
    uint64_t i;

    for (i = 0; i < n; i++)
        assert_int_equal(bblog_idx_insert(idx, i * len, len, 4096 + i * len), 0);
    EXPECT_ALL(idx, X(0, n * len, 4096));
    /* An appender in the middle of the index (the rightmost extent is elsewhere). */
    bblog_idx_clear(idx);
    assert_int_equal(bblog_idx_insert(idx, UINT64_MAX / 2, 1, 0), 0);
    for (i = 0; i < n / 10; i++)
        assert_int_equal(bblog_idx_insert(idx, i * len, len, 4096 + i * len), 0);
    EXPECT_ALL(idx, X(0, n / 10 * len, 4096), X(UINT64_MAX / 2, 1, 0));
    bblog_idx_destroy(idx);
}

static void test_strided(void **state)
{
    struct bblog_index *idx = new_index();
    const uint64_t n = 100000, len = 1000, stride = 4096;
    struct bblog_idx_iter it;
    struct bblog_extent e;
    uint64_t i;

    /* Contiguous in the log, not in the file: one extent per write. */
    for (i = 0; i < n; i++)
        assert_int_equal(bblog_idx_insert(idx, i * stride, len, i * len), 0);
    assert_int_equal(bblog_idx_count(idx), n);
    assert_int_equal(bblog_idx_bytes(idx), n * len);
    assert_int_equal(bblog_idx_end(idx), (n - 1) * stride + len);
    assert_sound(idx);
    bblog_idx_iter_init(idx, &it, 0, UINT64_MAX);
    for (i = 0; bblog_idx_iter_next(&it, &e); i++) {
        assert_int_equal(e.off, i * stride);
        assert_int_equal(e.len, len);
        assert_int_equal(e.log_off, i * len);
    }
    assert_int_equal(i, n);
    /* Filling the holes from the log's continuation still adds one extent per write. */
    for (i = 0; i < 100; i++)
        assert_int_equal(bblog_idx_insert(idx, i * stride + len, stride - len,
                                          n * len + i * (stride - len)), 0);
    assert_int_equal(bblog_idx_count(idx), n + 100);
    assert_sound(idx);
    bblog_idx_destroy(idx);
}

static void test_clear_keeps_memory(void **state)
{
    struct bblog_index *idx = new_index();
    size_t mem;
    uint64_t i;

    for (i = 0; i < 5000; i++)
        assert_int_equal(bblog_idx_insert(idx, i * 10, 5, i * 5 + 1000000 * (i & 1)), 0);
    mem = bblog_idx_memory(idx);
    assert_true(mem >= 5000 * sizeof(struct bblog_extent));
    bblog_idx_clear(idx);
    expect_all(idx, NULL, 0);
    assert_int_equal(bblog_idx_memory(idx), mem);
    /* Refilling to the same size needs no allocation at all. */
    malloc_mode = MALLOC_FAIL;
    for (i = 0; i < 5000; i++)
        assert_int_equal(bblog_idx_insert(idx, i * 10, 5, i * 5 + 1000000 * (i & 1)), 0);
    malloc_mode = MALLOC_OK;
    assert_int_equal(bblog_idx_memory(idx), mem);
    assert_int_equal(bblog_idx_count(idx), 5000);
    assert_sound(idx);
    bblog_idx_destroy(idx);
}

static void test_enomem(void **state)
{
    struct bblog_index *idx = NULL;
    struct snapshot snap;
    uint64_t i;
    size_t mem;

    malloc_mode = MALLOC_FAIL;
    assert_int_equal(bblog_idx_create(&idx), ENOMEM);
    assert_null(idx);
    malloc_mode = MALLOC_OK;
    idx = new_index();

    /* The first insert needs the first leaf. */
    malloc_mode = MALLOC_FAIL;
    take_snapshot(idx, &snap);
    assert_int_equal(bblog_idx_insert(idx, 0, 10, 0), ENOMEM);
    expect_snapshot(idx, &snap);
    malloc_mode = MALLOC_OK;

    /*
     * Fill the first leaf exactly: appending at the end fills leaves completely, so the insert
     * that changes the memory is the first that does not fit, and it starts a second leaf.
     */
    assert_int_equal(bblog_idx_insert(idx, 0, 10, 0), 0);
    mem = bblog_idx_memory(idx);
    for (i = 1; bblog_idx_memory(idx) == mem; i++)
        assert_int_equal(bblog_idx_insert(idx, i * 100, 10, i * 1000), 0);
    assert_true(i >= 5);
    /* Fill the second leaf up the same way, with every allocation failing. */
    mem = bblog_idx_memory(idx);
    malloc_mode = MALLOC_FAIL;
    for (; bblog_idx_insert(idx, i * 100, 10, i * 1000) == 0; i++)
        ;
    assert_int_equal(bblog_idx_memory(idx), mem);
    assert_sound(idx);

    /*
     * The first leaf holds [0, 10) [100, 110) [200, 210) [300, 310)... and is full. A new
     * extent, a split by insert, a split by remove: ENOMEM and nothing changed.
     */
    take_snapshot(idx, &snap);
    assert_int_equal(bblog_idx_insert(idx, i * 100, 10, i * 1000), ENOMEM);
    assert_int_equal(bblog_idx_insert(idx, 102, 5, 77777), ENOMEM);
    assert_int_equal(bblog_idx_remove(idx, 102, 5), ENOMEM);
    expect_snapshot(idx, &snap);

    /* Operations that need no new node still work. */
    assert_int_equal(bblog_idx_insert(idx, 110, 10, 1010), 0);      /* joins the left one */
    assert_int_equal(bblog_idx_insert(idx, 200, 10, 55555), 0);     /* reuses the node */
    assert_int_equal(bblog_idx_insert(idx, 104, 3, 1004), 0);       /* same mapping */
    assert_int_equal(bblog_idx_remove(idx, 0, 5), 0);               /* cuts a head */
    {
        const struct bblog_extent e[] = {X(5, 5, 5), X(100, 20, 1000), X(200, 10, 55555),
                                         X(300, 10, 3000)};
        expect_iter(idx, 0, 310, e, 4);
    }
    assert_sound(idx);

    /* Covering two extents frees one slot: exactly one new extent fits, then ENOMEM. */
    assert_int_equal(bblog_idx_insert(idx, 200, 110, 123456), 0);
    assert_int_equal(bblog_idx_insert(idx, 50, 10, 424242), 0);
    take_snapshot(idx, &snap);
    assert_int_equal(bblog_idx_insert(idx, 60, 10, 434343), ENOMEM);
    expect_snapshot(idx, &snap);

    /* A split by insert needs two slots: one free slot is not enough. */
    assert_int_equal(bblog_idx_remove(idx, 50, 10), 0);
    take_snapshot(idx, &snap);
    assert_int_equal(bblog_idx_insert(idx, 202, 5, 99999), ENOMEM);
    expect_snapshot(idx, &snap);
    assert_int_equal(bblog_idx_remove(idx, 202, 5), 0);             /* one is enough here */
    malloc_mode = MALLOC_OK;
    assert_sound(idx);

    /* And it all recovers once memory is back. */
    assert_int_equal(bblog_idx_insert(idx, 62, 5, 99999), 0);
    assert_sound(idx);
    bblog_idx_destroy(idx);
}

/* B+tree shape: many splits and merges, memory per extent. */

static void shuffle(uint64_t *a, size_t n, uint64_t *rng)
{
    size_t i;

    for (i = n - 1; i > 0; i--) {
        size_t j = (size_t)rng_below(rng, i + 1);
        uint64_t t = a[i];

        a[i] = a[j];
        a[j] = t;
    }
}

static uint64_t *shuffled(size_t n, uint64_t seed)
{
    uint64_t *a = malloc(n * sizeof(*a));
    size_t i;

    assert_non_null(a);
    for (i = 0; i < n; i++)
        a[i] = i;
    shuffle(a, n, &seed);
    return a;
}

/*
 * The bound on memory per extent that the fill rule gives (a leaf other than the last is at
 * least half full, an inner node other than the root too), once the index holds enough
 * extents to amortise the struct, the last leaf and the spare nodes.
 */
static void expect_bounded_memory(const struct bblog_index *idx)
{
    size_t n = bblog_idx_count(idx), mem = bblog_idx_memory(idx);

    if (n >= 4096 && mem > TEST_MAX_BYTES_PER_EXTENT * n)
        fail_msg("%zu bytes for %zu extents: %.1f bytes per extent", mem, n,
                 (double)mem / (double)n);
}

static void test_btree_shuffled_build_and_drain(void **state)
{
    const size_t n = 60000;
    uint64_t *ins = shuffled(n, 11), *del = shuffled(n, 12), *pos = malloc(n * sizeof(*pos));
    struct bblog_index *idx = new_index();
    struct bblog_idx_iter it;
    struct bblog_extent e;
    size_t i, peak;

    assert_non_null(pos);
    /* Distinct slots in random order: every insert lands in the middle of some leaf. */
    for (i = 0; i < n; i++) {
        assert_int_equal(bblog_idx_insert(idx, ins[i] * 16, 8, i * 8), 0);
        pos[ins[i]] = i;
        if (i % 10000 == 9999) {
            assert_sound(idx);
            expect_bounded_memory(idx);
        }
    }
    assert_int_equal(bblog_idx_count(idx), n);
    bblog_idx_iter_init(idx, &it, 0, UINT64_MAX);
    for (i = 0; bblog_idx_iter_next(&it, &e); i++) {
        assert_int_equal(e.off, i * 16);
        assert_int_equal(e.len, 8);
        assert_int_equal(e.log_off, pos[i] * 8);
    }
    assert_int_equal(i, n);
    /* A query crossing many leaves, clipped at both ends. */
    bblog_idx_iter_init(idx, &it, 1000 * 16 + 3, 2000 * 16);
    assert_true(bblog_idx_iter_next(&it, &e));
    assert_int_equal(e.off, 1000 * 16 + 3);
    assert_int_equal(e.len, 5);
    for (i = 1001; bblog_idx_iter_next(&it, &e); i++) {
        assert_int_equal(e.off, i * 16);
        assert_int_equal(e.len, i < 3000 ? 8 : 3);
    }
    assert_int_equal(i, 3001);

    /* Removing in another random order: leaves empty out everywhere and merge or borrow. */
    peak = bblog_idx_memory(idx);
    for (i = 0; i < n - n / 10; i++) {
        assert_int_equal(bblog_idx_remove(idx, del[i] * 16, 16), 0);
        if (i % 10000 == 9999) {
            assert_sound(idx);
            expect_bounded_memory(idx);
        }
    }
    assert_int_equal(bblog_idx_count(idx), n / 10);
    assert_sound(idx);
    /* What is left is exactly the slots not removed, in order. */
    memset(pos, 0, n * sizeof(*pos));
    for (i = n - n / 10; i < n; i++)
        pos[del[i]] = 1;
    bblog_idx_iter_init(idx, &it, 0, UINT64_MAX);
    for (i = 0; bblog_idx_iter_next(&it, &e); i++) {
        while (i < n && pos[i] == 0)
            i++;
        assert_true(i < n);
        assert_int_equal(e.off, i * 16);
    }
    while (i < n && pos[i] == 0)
        i++;
    assert_int_equal(i, n);
    /* Emptied, the index gives back all but a few nodes. */
    assert_int_equal(bblog_idx_remove(idx, 0, UINT64_MAX), 0);
    expect_all(idx, NULL, 0);
    assert_true(bblog_idx_memory(idx) <= peak / 100);
    /* And it grows again. */
    for (i = 0; i < n / 10; i++)
        assert_int_equal(bblog_idx_insert(idx, del[i] * 16, 8, i), 0);
    assert_int_equal(bblog_idx_count(idx), n / 10);
    assert_sound(idx);
    bblog_idx_destroy(idx);
    free(pos);
    free(del);
    free(ins);
}

static void test_btree_descending(void **state)
{
    const uint64_t n = 20000;
    struct bblog_index *idx = new_index();
    struct bblog_idx_iter it;
    struct bblog_extent e;
    uint64_t i;

    /* Every insert goes before everything: the first leaf splits over and over. */
    for (i = n; i-- > 0;)
        assert_int_equal(bblog_idx_insert(idx, i * 10, 5, i * 5 + (i & 1) * 1000000), 0);
    assert_int_equal(bblog_idx_count(idx), n);
    assert_sound(idx);
    expect_bounded_memory(idx);
    /*
     * Filling every gap, from the right, so that it continues its left neighbour in the log:
     * each extent grows to 10 bytes and touches the next in the file but not in the log...
     */
    for (i = n; i-- > 0;)
        assert_int_equal(bblog_idx_insert(idx, i * 10 + 5, 5, i * 5 + (i & 1) * 1000000 + 5),
                         0);
    assert_sound(idx);
    bblog_idx_iter_init(idx, &it, 0, UINT64_MAX);
    for (i = 0; bblog_idx_iter_next(&it, &e); i++) {
        assert_int_equal(e.off, i * 10);
        assert_int_equal(e.len, 10);
        assert_int_equal(e.log_off, i * 5 + (i & 1) * 1000000);
    }
    assert_int_equal(i, n);
    /* ... and rewriting each one, from the right, with one log run joins them all. */
    for (i = n; i-- > 0;)
        assert_int_equal(bblog_idx_insert(idx, i * 10, 10, 7 + i * 10), 0);
    EXPECT_ALL(idx, X(0, n * 10, 7));
    bblog_idx_destroy(idx);
}

static void test_btree_adversarial_memory(void **state)
{
    const size_t n = 40000;
    uint64_t *perm = shuffled(n, 21), rng = 22;
    struct bblog_index *idx = new_index();
    size_t i;

    /* One extent split in 2n + 1 pieces by writes in random order into its middle... */
    assert_int_equal(bblog_idx_insert(idx, 0, n * 16, 0), 0);
    for (i = 0; i < n; i++) {
        assert_int_equal(bblog_idx_insert(idx, perm[i] * 16 + 4, 4, (1ULL << 40) + i * 4), 0);
        if (i % 8192 == 8191)
            expect_bounded_memory(idx);
    }
    assert_int_equal(bblog_idx_count(idx), 2 * n + 1);
    assert_sound(idx);
    expect_bounded_memory(idx);
    /*
     * ... then the new pieces punched out in another order, which leaves the n + 1 extents
     * [0, 4), [s * 16 + 8, s * 16 + 20) (the halves of neighbouring slots join again) and
     * [(n - 1) * 16 + 8, n * 16): every leaf loses half its extents...
     */
    shuffle(perm, n, &rng);
    for (i = 0; i < n; i++) {
        assert_int_equal(bblog_idx_remove(idx, perm[i] * 16 + 4, 4), 0);
        if (i % 8192 == 8191)
            expect_bounded_memory(idx);
    }
    assert_int_equal(bblog_idx_count(idx), n + 1);
    assert_sound(idx);
    expect_bounded_memory(idx);
    /* ... then every other one of those, mostly one at a time, some in long runs. */
    for (i = 0; i < n; i += 2) {
        uint64_t len = rng_below(&rng, 64) == 0 ? 16 * rng_below(&rng, 64) + 12 : 12;

        assert_int_equal(bblog_idx_remove(idx, perm[i] * 16 + 8, len), 0);
        if (i % 8192 == 8190)
            expect_bounded_memory(idx);
    }
    assert_true(bblog_idx_count(idx) <= n / 2 + 1);
    assert_true(bblog_idx_count(idx) >= n / 4);
    assert_sound(idx);
    expect_bounded_memory(idx);

    /* Random overlapping writes (the bench's pattern, scaled down), then random removes. */
    bblog_idx_destroy(idx);
    idx = new_index();
    for (i = 0; i < 200000; i++) {
        uint64_t off = rng_below(&rng, 16 << 20), len = 1 + rng_below(&rng, 4096);

        assert_int_equal(bblog_idx_insert(idx, off, len, rng_below(&rng, 1ULL << 40)), 0);
    }
    assert_sound(idx);
    assert_true(bblog_idx_count(idx) > 4096);
    expect_bounded_memory(idx);
    for (i = 0; i < 200000; i++) {
        uint64_t off = rng_below(&rng, 16 << 20), len = 1 + rng_below(&rng, 64);

        if (i % 2)
            assert_int_equal(bblog_idx_remove(idx, off, len), 0);
        else
            assert_int_equal(bblog_idx_insert(idx, off, len, rng_below(&rng, 1ULL << 40)), 0);
    }
    assert_sound(idx);
    expect_bounded_memory(idx);
    bblog_idx_destroy(idx);
    free(perm);
}

static void test_enomem_every_split(void **state)
{
    /*
     * Inserts only, so no merge leaves spare nodes: a split needs a leaf and, where its
     * ancestors are full, inner nodes, all allocated at once. Each insert runs with its first,
     * then second... allocation failing until it succeeds; every failure changes nothing.
     */
    const size_t n = 3000;
    uint64_t *perm = shuffled(n, 31);
    struct bblog_index *idx = new_index();
    unsigned long fails = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        unsigned long budget;
        int rc;

        for (budget = 0;; budget++) {
            struct snapshot snap;

            take_snapshot(idx, &snap);
            malloc_mode = MALLOC_BUDGET;
            malloc_budget = budget;
            rc = bblog_idx_insert(idx, perm[i] * 8, 4, i * 4);
            malloc_mode = MALLOC_OK;
            if (rc == 0) {
                free(snap.e);
                break;
            }
            assert_int_equal(rc, ENOMEM);
            expect_snapshot(idx, &snap);
            fails++;
        }
    }
    assert_int_equal(bblog_idx_count(idx), n);
    assert_sound(idx);
    /* Every leaf was first refused: there are at least n / 64 with 64 extents or fewer each. */
    assert_true(fails >= n / 64);
    bblog_idx_destroy(idx);
    free(perm);
}

/* Randomized tests against the byte model. */

struct model_cfg {
    uint64_t seed;
    unsigned long ops;
    uint64_t base;          /* file offset of model[0] */
    size_t size;            /* bytes in the window */
    uint64_t max_len;       /* write and remove lengths are 1..max_len */
    uint64_t log_base;      /* log positions are in [log_base, log_base + log_span) */
    uint64_t log_span;
    bool inject;            /* make half the mallocs fail, and recreate the index often */
    bool inject_each;       /* run each op with its 1st, then 2nd... malloc failing until it
                             * succeeds, and recreate the index often */
};

struct model {
    const struct model_cfg *cfg;
    uint64_t *map;          /* log position of each byte of the window, or NONE */
    uint64_t bytes;         /* bytes mapped */
    uint64_t rng;
    uint64_t log_cursor;    /* next append position, relative to log_base */
    struct bblog_extent *runs;
};

/* The maximal runs of the model in [lo, hi) (window-relative), in file offsets. */
static size_t model_runs(const struct model *m, size_t lo, size_t hi)
{
    size_t n = 0, b;

    for (b = lo; b < hi; b++) {
        if (m->map[b] == NONE)
            continue;
        if (n > 0 && b > lo && m->map[b - 1] != NONE && m->map[b] == m->map[b - 1] + 1) {
            m->runs[n - 1].len++;
            continue;
        }
        m->runs[n].off = m->cfg->base + b;
        m->runs[n].len = 1;
        m->runs[n].log_off = m->map[b];
        n++;
    }
    return n;
}

static void model_check_full(const struct model *m, const struct bblog_index *idx)
{
    size_t n = model_runs(m, 0, m->cfg->size);

    expect_all(idx, m->runs, n);
    assert_int_equal(bblog_idx_bytes(idx), m->bytes);
}

static void model_apply_insert(struct model *m, size_t off, size_t len, uint64_t log_off)
{
    size_t b;

    for (b = 0; b < len; b++) {
        m->bytes += m->map[off + b] == NONE;
        m->map[off + b] = log_off + b;
    }
}

static void model_apply_remove(struct model *m, size_t off, size_t len)
{
    size_t b;

    for (b = off; b < off + len && b < m->cfg->size; b++) {
        m->bytes -= m->map[b] != NONE;
        m->map[b] = NONE;
    }
}

/* Picks the log position of a write of len bytes at window offset off. */
static uint64_t model_pick_log(struct model *m, size_t off, uint64_t len)
{
    const struct model_cfg *c = m->cfg;
    uint64_t top = c->log_base + c->log_span - len;     /* highest start that fits */
    uint64_t g;

    switch (rng_below(&m->rng, 10)) {
    case 0:
    case 1:
    case 2:
    case 3:
        break;
    case 4:
    case 5:
        /* Continue the byte before in the log: must join it. */
        if (off > 0 && m->map[off - 1] != NONE && m->map[off - 1] + 1 <= top)
            return m->map[off - 1] + 1;
        break;
    case 6:
        /* End where the byte after continues: must join it. */
        if (off + len < c->size && m->map[off + len] != NONE &&
            m->map[off + len] >= c->log_base + len)
            return m->map[off + len] - len;
        break;
    case 7:
        /* The mapping already there (a replay). */
        if (m->map[off] != NONE && m->map[off] <= top)
            return m->map[off];
        break;
    default:
        return c->log_base + rng_below(&m->rng, c->log_span - len + 1);
    }
    /* Append to the log, wrapping round (reused positions make accidental joins). */
    if (m->log_cursor > c->log_span - len)
        m->log_cursor = 0;
    g = c->log_base + m->log_cursor;
    m->log_cursor += len;
    return g;
}

static uint64_t model_pick_len(struct model *m)
{
    /* Mostly short; sometimes up to the whole window. */
    if (rng_below(&m->rng, 256) == 0)
        return 1 + rng_below(&m->rng, m->cfg->size);
    return 1 + rng_below(&m->rng, m->cfg->max_len);
}

static void model_query(struct model *m, const struct bblog_index *idx)
{
    const struct model_cfg *c = m->cfg;
    size_t lo = rng_below(&m->rng, c->size), hi;
    uint64_t len;

    if (rng_below(&m->rng, 8) == 0)
        len = UINT64_MAX;
    else
        len = 1 + rng_below(&m->rng, rng_below(&m->rng, 4) ? c->max_len * 4 : c->size);
    hi = len >= c->size - lo ? c->size : lo + len;
    expect_iter(idx, c->base + lo, len, m->runs, model_runs(m, lo, hi));
}

/*
 * Runs one insert or remove with the configured fault injection; on success applies it to the
 * model, on ENOMEM checks that nothing changed.
 */
static int model_op(struct model *m, struct bblog_index *idx, bool insert, size_t off,
                    uint64_t len, uint64_t log_off, unsigned long *enomem)
{
    bool inject = m->cfg->inject || m->cfg->inject_each;
    unsigned long budget = 0;
    int rc;

    for (;;) {
        struct snapshot snap = {0};

        if (inject)
            take_snapshot(idx, &snap);
        malloc_mode = m->cfg->inject ? MALLOC_FAIL_HALF
                      : m->cfg->inject_each ? MALLOC_BUDGET : MALLOC_OK;
        malloc_budget = budget++;
        if (insert)
            rc = bblog_idx_insert(idx, m->cfg->base + off, len, log_off);
        else
            rc = bblog_idx_remove(idx, m->cfg->base + off, len);
        malloc_mode = MALLOC_OK;
        if (rc == 0) {
            if (insert)
                model_apply_insert(m, off, len, log_off);
            else
                model_apply_remove(m, off, len < m->cfg->size ? (size_t)len : m->cfg->size);
        } else {
            assert_int_equal(rc, ENOMEM);
            assert_true(inject);
            expect_snapshot(idx, &snap);
            (*enomem)++;
        }
        free(snap.e);
        if (rc == 0 || !m->cfg->inject_each)
            return rc;
    }
}

static void run_model(const struct model_cfg *c)
{
    struct model m = {.cfg = c, .rng = c->seed};
    struct bblog_index *idx;
    unsigned long step, check_every = c->size / 512 + 1, enomem = 0;
    size_t b;

    m.map = malloc(c->size * sizeof(*m.map));
    m.runs = malloc(c->size * sizeof(*m.runs));
    assert_non_null(m.map);
    assert_non_null(m.runs);
    for (b = 0; b < c->size; b++)
        m.map[b] = NONE;
    malloc_rng = c->seed;
    malloc_failures = 0;
    idx = new_index();

    for (step = 0; step < c->ops; step++) {
        uint64_t r = rng_below(&m.rng, 1000);
        size_t off = rng_below(&m.rng, c->size);

        if ((c->inject || c->inject_each) && step % 3000 == 2999) {
            /* A fresh index has no nodes, so allocations (and failures) recur. */
            bblog_idx_destroy(idx);
            idx = new_index();
            model_apply_remove(&m, 0, c->size);
        }
        if (r < 520) {
            uint64_t len = model_pick_len(&m);

            if (len > c->size - off)
                len = c->size - off;
            model_op(&m, idx, true, off, len, model_pick_log(&m, off, len), &enomem);
        } else if (r < 560) {
            /* A burst of appends each continuing the one before, anywhere in the window. */
            uint64_t len = 1 + rng_below(&m.rng, c->max_len / 4 + 1);
            uint64_t log_off = model_pick_log(&m, off, 1);
            unsigned k, burst = 1 + (unsigned)rng_below(&m.rng, 16);

            for (k = 0; k < burst && off + len <= c->size; k++) {
                if (log_off > c->log_base + c->log_span - len)
                    break;
                if (model_op(&m, idx, true, off, len, log_off, &enomem) != 0)
                    break;
                off += len;
                log_off += len;
            }
        } else if (r < 800) {
            uint64_t len = rng_below(&m.rng, 64) == 0 ? UINT64_MAX - rng_below(&m.rng, 2)
                                                       : model_pick_len(&m);

            model_op(&m, idx, false, off, len, 0, &enomem);
        } else if (r < 999 || rng_below(&m.rng, 8) != 0) {
            model_query(&m, idx);
        } else {
            /* Rare (1 in 8000): lets the index grow between clears. */
            bblog_idx_clear(idx);
            model_apply_remove(&m, 0, c->size);
        }
        assert_int_equal(bblog_idx_bytes(idx), m.bytes);
        if (step % check_every == 0)
            model_check_full(&m, idx);
    }
    model_check_full(&m, idx);
    if (c->inject || c->inject_each) {
        /* Not vacuous: the failure paths ran, many times. */
        assert_true(malloc_failures >= 20);
        assert_true(enomem >= 20);
    }
    bblog_idx_destroy(idx);
    free(m.runs);
    free(m.map);
}

static void test_model_many_extents(void **state)
{
    const struct model_cfg c = {.seed = 1, .ops = 50000, .base = 0, .size = 4096,
                                .max_len = 48, .log_base = 0, .log_span = 1 << 20};
    run_model(&c);
}

static void test_model_heavy_overlap(void **state)
{
    const struct model_cfg c = {.seed = 2, .ops = 40000, .base = 1ULL << 40, .size = 1024,
                                .max_len = 400, .log_base = 7, .log_span = 1 << 14};
    run_model(&c);
}

static void test_model_top_of_range(void **state)
{
    /* The window ends at 2^64 - 1, the log too. */
    const struct model_cfg c = {.seed = 3, .ops = 40000, .base = UINT64_MAX - 4096,
                                .size = 4096, .max_len = 200,
                                .log_base = UINT64_MAX - (1 << 16), .log_span = 1 << 16};
    run_model(&c);
}

static void test_model_deep_tree(void **state)
{
    /* A wide window of short writes: thousands of extents, hundreds of leaves. */
    const struct model_cfg c = {.seed = 5, .ops = 40000, .base = 12345, .size = 1 << 16,
                                .max_len = 12, .log_base = 0, .log_span = 1 << 24};
    run_model(&c);
}

static void test_model_wide(void **state)
{
    /* Tiny extents over 256 KiB: tens of thousands of extents, two inner levels or more. */
    const struct model_cfg c = {.seed = 6, .ops = 60000, .base = 1ULL << 50, .size = 1 << 18,
                                .max_len = 6, .log_base = 1ULL << 33, .log_span = 1 << 26};
    run_model(&c);
}

static void test_model_enomem(void **state)
{
    const struct model_cfg c = {.seed = 4, .ops = 40000, .base = 4096, .size = 8192,
                                .max_len = 32, .log_base = 0, .log_span = 1 << 20,
                                .inject = true};
    run_model(&c);
}

static void test_model_enomem_each(void **state)
{
    /* Every allocation point of every op fails once: a failed split at any level is undone. */
    const struct model_cfg c = {.seed = 7, .ops = 20000, .base = 0, .size = 16384,
                                .max_len = 24, .log_base = 0, .log_span = 1 << 20,
                                .inject_each = true};
    run_model(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_exact_overwrite),
        cmocka_unit_test(test_split_middle),
        cmocka_unit_test(test_cover_many),
        cmocka_unit_test(test_coalesce),
        cmocka_unit_test(test_join_trimmed_head),
        cmocka_unit_test(test_remove),
        cmocka_unit_test(test_iter_clip),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_sequential),
        cmocka_unit_test(test_strided),
        cmocka_unit_test(test_clear_keeps_memory),
        cmocka_unit_test(test_enomem),
        cmocka_unit_test(test_enomem_every_split),
        cmocka_unit_test(test_model_many_extents),
        cmocka_unit_test(test_model_heavy_overlap),
        cmocka_unit_test(test_model_top_of_range),
        cmocka_unit_test(test_btree_shuffled_build_and_drain),
        cmocka_unit_test(test_btree_descending),
        cmocka_unit_test(test_btree_adversarial_memory),
        cmocka_unit_test(test_model_deep_tree),
        cmocka_unit_test(test_model_wide),
        cmocka_unit_test(test_model_enomem),
        cmocka_unit_test(test_model_enomem_each),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
