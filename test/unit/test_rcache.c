/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Host unit tests of ibmc_rcache.c: the memory-registration cache, over fake
 * registration callbacks that check every deregistration. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_rcache.h"
#include "tap.h"
#include "rng.h"

#define PAGE ((size_t) 4096)
#define BIG_LIMIT ((size_t) 1 << 30)
#define NO_LO ((uintptr_t) 0)
#define NO_HI UINTPTR_MAX
#define MAX_MRS 16384

/* ---- fake registration ---- */

/* One registration the fake made.  Its handle is its index + 1, so a bad
 * handle is caught without dereferencing it. */
typedef struct {
    uintptr_t start, end;
    int live;
    int refs;                   /* references the test holds on it */
    int invalid;                /* the test invalidated a range overlapping it */
    uint64_t stamp;             /* when the test last acquired it */
} fake_mr_t;

typedef struct {
    fake_mr_t mr[MAX_MRS];
    int n_mr;                   /* registrations made */
    int n_reg;                  /* reg_cb calls, failed ones included */
    int n_live;
    int errors;                 /* bad callback calls, each printed as a diagnostic */
    int fail_err;               /* nonzero: the next reg_cb fails with this code */
    int fail_silent;            /* nonzero: the next reg_cb fails and sets no code */
    int op_dereg[MAX_MRS];      /* registrations deregistered since n_op_dereg was reset */
    int n_op_dereg;
} fake_t;

static void *fake_reg(void *ctx, uintptr_t start, uintptr_t end, int *err)
{
    fake_t *f = ctx;
    fake_mr_t *mr;

    f->n_reg++;
    if (*err != 0) {
        tap_diag("  reg_cb: *err is %d on entry", *err);
        f->errors++;
    }
    if (start >= end || start % PAGE || end % PAGE) {
        tap_diag("  reg_cb: bad range [0x%llx, 0x%llx)", (unsigned long long) start,
                 (unsigned long long) end);
        f->errors++;
    }
    if (f->fail_err || f->fail_silent) {
        if (!f->fail_silent)
            *err = f->fail_err;
        f->fail_err = f->fail_silent = 0;
        return NULL;
    }
    if (f->n_mr == MAX_MRS) {
        tap_diag("  reg_cb: out of fake registrations");
        f->errors++;
        *err = ENOSPC;
        return NULL;
    }
    mr = &f->mr[f->n_mr++];
    memset(mr, 0, sizeof(*mr));
    mr->start = start;
    mr->end = end;
    mr->live = 1;
    f->n_live++;
    return (void *) (uintptr_t) f->n_mr;
}

static void fake_dereg(void *ctx, void *handle)
{
    fake_t *f = ctx;
    uintptr_t h = (uintptr_t) handle;
    fake_mr_t *mr;

    if (h == 0 || h > (uintptr_t) f->n_mr) {
        tap_diag("  dereg_cb: unknown handle %p", handle);
        f->errors++;
        return;
    }
    mr = &f->mr[h - 1];
    if (!mr->live) {
        tap_diag("  dereg_cb: registration %d deregistered twice", (int) (h - 1));
        f->errors++;
        return;
    }
    if (mr->refs > 0) {
        tap_diag("  dereg_cb: registration %d deregistered with %d references held",
                 (int) (h - 1), mr->refs);
        f->errors++;
    }
    mr->live = 0;
    f->n_live--;
    f->op_dereg[f->n_op_dereg++] = (int) (h - 1);
}

static void *no_memory(size_t size)
{
    (void) size;
    return NULL;
}

/* The fake registration behind an entry, or -1 (a failure). */
static int mr_index(const fake_t * f, const ibmc_rcache_entry_t * e)
{
    uintptr_t h = e ? (uintptr_t) e->handle : 0;

    if (h == 0 || h > (uintptr_t) f->n_mr) {
        TAP_FAIL("an entry without a handle the fake made");
        return -1;
    }
    return (int) (h - 1);
}

/* A cache over a fresh fake. */
static fake_t *setup(ibmc_rcache_t * rc, size_t limit, size_t align)
{
    fake_t *f = calloc(1, sizeof(*f));

    if (!f)
        abort();
    ibmc_rcache_init(rc, limit, PAGE, align, fake_reg, fake_dereg, f);
    return f;
}

/* Destroys the cache and checks that every registration was deregistered
 * exactly once and that the callbacks saw nothing wrong. */
static void finish(ibmc_rcache_t * rc, fake_t * f)
{
    for (int i = 0; i < f->n_mr; i++)
        f->mr[i].refs = 0;      /* destroy deregisters held entries too */
    ibmc_rcache_destroy(rc);
    TAP_EXPECT_EQ(f->n_live, 0);
    TAP_EXPECT_EQ(f->errors, 0);
    TAP_EXPECT_EQ(rc->cached_bytes, 0);
    TAP_EXPECT_EQ(rc->n_entries, 0);
    TAP_EXPECT_EQ(rc->n_dead, 0);
    TAP_EXPECT(rc->lru.head == NULL && rc->lru.tail == NULL && rc->dead.head == NULL);
    free(f);
}

/* Acquires [a, a+len) within [lo, hi), which must succeed, and counts the
 * test's reference on the fake registration. */
static ibmc_rcache_entry_t *get_in(ibmc_rcache_t * rc, fake_t * f, uintptr_t a, size_t len,
                                   uintptr_t lo, uintptr_t hi)
{
    ibmc_rcache_entry_t *e = NULL;
    int err = ibmc_rcache_acquire(rc, (const void *) a, len, lo, hi, &e);
    int i;

    if (!TAP_EXPECT(err == 0 && e != NULL)) {
        tap_diag("    acquire(0x%llx, %zu) returned %d", (unsigned long long) a, len, err);
        return NULL;
    }
    i = mr_index(f, e);
    if (i >= 0)
        f->mr[i].refs++;
    TAP_EXPECT(e->start <= a && a + (len ? len : 1) <= e->end);
    TAP_EXPECT(!e->invalid);
    return e;
}

static ibmc_rcache_entry_t *get(ibmc_rcache_t * rc, fake_t * f, uintptr_t a, size_t len)
{
    return get_in(rc, f, a, len, NO_LO, NO_HI);
}

/* Releases an entry that get returned (NULL: get already failed). */
static void put(ibmc_rcache_t * rc, fake_t * f, ibmc_rcache_entry_t * e)
{
    int i;

    if (!e)
        return;
    i = mr_index(f, e);
    if (i >= 0)
        f->mr[i].refs--;
    ibmc_rcache_release(rc, e);
}

/* Acquires and releases at once; returns the registration used. */
static int touch(ibmc_rcache_t * rc, fake_t * f, uintptr_t a, size_t len)
{
    ibmc_rcache_entry_t *e = get(rc, f, a, len);
    int i = e ? mr_index(f, e) : -1;

    put(rc, f, e);
    return i;
}

static int idx(const fake_t * f, const ibmc_rcache_entry_t * e)
{
    return e ? mr_index(f, e) : -1;
}

#define EXPECT_COUNTS(rc, h, m, ev, inv) \
    do { \
        TAP_EXPECT_EQ((rc)->hits, h); \
        TAP_EXPECT_EQ((rc)->misses, m); \
        TAP_EXPECT_EQ((rc)->evictions, ev); \
        TAP_EXPECT_EQ((rc)->invalidations, inv); \
    } while (0)

#define EXPECT_GAUGES(rc, bytes, n, dead) \
    do { \
        TAP_EXPECT_EQ((rc)->cached_bytes, bytes); \
        TAP_EXPECT_EQ((rc)->n_entries, n); \
        TAP_EXPECT_EQ((rc)->n_dead, dead); \
    } while (0)

/* Nothing registered, nothing cached. */
#define EXPECT_EMPTY(rc, f) \
    do { \
        TAP_EXPECT_EQ((f)->n_live, 0); \
        EXPECT_GAUGES(rc, 0, 0, 0); \
    } while (0)

/* What a miss must register, worked out the long way: the pages of the
 * range, grown to align but not past [lo, hi) rounded in to pages. */
static void expected_range(uintptr_t a, size_t len, uintptr_t lo, uintptr_t hi, size_t align,
                           uintptr_t * start, uintptr_t * end)
{
    uintptr_t first = a / PAGE * PAGE, last = (a + len + PAGE - 1) / PAGE * PAGE;
    uintptr_t gs = a / align * align, ge = (a + len + align - 1) / align * align;
    uintptr_t lo_in = (lo + PAGE - 1) / PAGE * PAGE, hi_in = hi / PAGE * PAGE;

    *start = gs >= lo_in ? gs : (lo_in < first ? lo_in : first);
    *end = ge <= hi_in ? ge : (hi_in > last ? hi_in : last);
}

/* ---- randomized model test ---- */

#define SPACE_BASE ((uintptr_t) 0x20000000)
#define SPACE_PAGES 64
#define SPACE_SIZE (SPACE_PAGES * PAGE)
#define MAX_HELD 16

/* The model is the fake's table: a registration is cached when it is live
 * and not invalidated, and its stamp orders the LRU list. */
typedef struct {
    ibmc_rcache_t rc;
    fake_t *f;
    rng_t rng;
    size_t limit;
    struct {
        ibmc_rcache_entry_t *e;
        int mr;
    } held[MAX_HELD];
    int n_held;
    uint64_t clock;
    /* what the counters must say */
    uint64_t hits, misses, failures, evictions, invalidations;
} model_t;

static int is_cached(const fake_mr_t * mr)
{
    return mr->live && !mr->invalid;
}

/* What an acquire or the release of a valid entry deregistered must be the
 * least recently acquired unreferenced entries, no more than the limit asks. */
static void check_evictions(model_t * m)
{
    fake_t *f = m->f;
    uint64_t newest = 0, newest_size = 0;

    for (int k = 0; k < f->n_op_dereg; k++) {
        const fake_mr_t *x = &f->mr[f->op_dereg[k]];
        TAP_EXPECT(!x->invalid);
        m->evictions++;
        if (x->stamp >= newest) {
            newest = x->stamp;
            newest_size = x->end - x->start;
        }
        for (int j = 0; j < f->n_mr; j++) {
            const fake_mr_t *y = &f->mr[j];
            if (is_cached(y) && y->refs == 0 && y->stamp < x->stamp) {
                tap_diag("    evicted %d (stamp %llu) but kept the older %d (stamp %llu)",
                         f->op_dereg[k], (unsigned long long) x->stamp, j,
                         (unsigned long long) y->stamp);
                TAP_FAIL("eviction out of LRU order");
            }
        }
    }
    if (f->n_op_dereg > 0)
        TAP_EXPECT(m->rc.cached_bytes + newest_size > m->limit);
}

static void model_acquire(model_t * m)
{
    fake_t *f = m->f;
    size_t len = 1 + rng_below(&m->rng, 3 * PAGE);
    uintptr_t a = SPACE_BASE + rng_below(&m->rng, SPACE_SIZE - len + 1);
    uintptr_t lo = NO_LO, hi = NO_HI, start, end;
    int fail = rng_below(&m->rng, 16) == 0, want = -1, n_mr = f->n_mr, err, i;
    ibmc_rcache_entry_t *e = NULL;

    if (rng_below(&m->rng, 4) != 0) {
        lo = SPACE_BASE + rng_below(&m->rng, a - SPACE_BASE + 1);
        hi = a + len + rng_below(&m->rng, SPACE_BASE + SPACE_SIZE - (a + len) + 1);
    }
    /* a hit returns the most recently acquired cached entry covering the range */
    for (i = 0; i < f->n_mr; i++) {
        const fake_mr_t *mr = &f->mr[i];
        if (is_cached(mr) && mr->start <= a && a + len <= mr->end &&
            (want < 0 || mr->stamp > f->mr[want].stamp))
            want = i;
    }
    fail = fail && want < 0;
    if (fail)
        f->fail_err = EFAULT;

    err = ibmc_rcache_acquire(&m->rc, (const void *) a, len, lo, hi, &e);
    if (fail) {
        m->misses++;
        m->failures++;
        TAP_EXPECT_EQ(err, EFAULT);
        TAP_EXPECT(e == NULL);
        TAP_EXPECT_EQ(f->n_mr, n_mr);
        return;
    }
    if (!TAP_EXPECT(err == 0 && e != NULL) || (i = mr_index(f, e)) < 0)
        return;
    if (want >= 0) {
        m->hits++;
        TAP_EXPECT_EQ(i, want);
        TAP_EXPECT_EQ(f->n_mr, n_mr);
    } else {
        m->misses++;
        TAP_EXPECT_EQ(i, n_mr);
        expected_range(a, len, lo, hi, m->rc.align, &start, &end);
        TAP_EXPECT_EQ(f->mr[i].start, start);
        TAP_EXPECT_EQ(f->mr[i].end, end);
    }
    f->mr[i].refs++;
    f->mr[i].stamp = ++m->clock;
    TAP_EXPECT(is_cached(&f->mr[i]));
    TAP_EXPECT(e->start == f->mr[i].start && e->end == f->mr[i].end);
    TAP_EXPECT(e->start <= a && a + len <= e->end);
    TAP_EXPECT(!e->invalid);
    m->held[m->n_held].e = e;
    m->held[m->n_held].mr = i;
    m->n_held++;
    check_evictions(m);
}

static void model_release(model_t * m)
{
    int k = (int) rng_below(&m->rng, m->n_held);
    ibmc_rcache_entry_t *e = m->held[k].e;
    fake_mr_t *mr = &m->f->mr[m->held[k].mr];

    m->held[k] = m->held[--m->n_held];
    mr->refs--;
    ibmc_rcache_release(&m->rc, e);
    if (mr->invalid) {
        /* an invalid entry goes with its last release, and nothing else goes */
        TAP_EXPECT_EQ(m->f->n_op_dereg, mr->refs == 0);
        TAP_EXPECT_EQ(mr->live, mr->refs > 0);
    } else {
        check_evictions(m);
    }
}

static void model_invalidate(model_t * m)
{
    fake_t *f = m->f;
    size_t len = rng_below(&m->rng, 3 * PAGE);
    uintptr_t a = SPACE_BASE + rng_below(&m->rng, SPACE_SIZE - len + 1);
    int want = 0, gone = 0, n;

    if (rng_below(&m->rng, 3) == 0) {
        /* whole pages, so that entry edges touch the range */
        size_t pages = 1 + rng_below(&m->rng, 3);
        len = pages * PAGE;
        a = SPACE_BASE + rng_below(&m->rng, SPACE_PAGES - pages + 1) * PAGE;
    }
    for (int i = 0; i < f->n_mr; i++) {
        fake_mr_t *mr = &f->mr[i];
        if (is_cached(mr) && len > 0 && mr->start < a + len && a < mr->end) {
            mr->invalid = 1;
            want++;
            gone += mr->refs == 0;
        }
    }
    n = ibmc_rcache_invalidate(&m->rc, (const void *) a, len);
    m->invalidations += want;
    TAP_EXPECT_EQ(n, want);
    /* exactly the unreferenced ones it hit */
    TAP_EXPECT_EQ(f->n_op_dereg, gone);
    for (int k = 0; k < f->n_op_dereg; k++)
        TAP_EXPECT(f->mr[f->op_dereg[k]].invalid);
}

static void model_flush(model_t * m)
{
    fake_t *f = m->f;
    int want = 0;

    for (int i = 0; i < f->n_mr; i++)
        want += is_cached(&f->mr[i]) && f->mr[i].refs == 0;
    ibmc_rcache_flush(&m->rc);
    TAP_EXPECT_EQ(f->n_op_dereg, want);
    for (int k = 0; k < f->n_op_dereg; k++)
        TAP_EXPECT(!f->mr[f->op_dereg[k]].invalid);
}

static void check_state(model_t * m)
{
    const fake_t *f = m->f;
    const ibmc_rcache_t *rc = &m->rc;
    uint64_t bytes = 0, n = 0, dead = 0, idle = 0;

    for (int i = 0; i < f->n_mr; i++) {
        const fake_mr_t *mr = &f->mr[i];
        if (!mr->live)
            continue;
        if (mr->invalid) {
            dead++;
            if (mr->refs == 0)
                TAP_FAIL("an invalid, unreferenced registration is still live");
        } else {
            bytes += mr->end - mr->start;
            n++;
            idle += mr->refs == 0;
        }
    }
    EXPECT_GAUGES(rc, bytes, n, dead);
    TAP_EXPECT(rc->cached_bytes <= m->limit || idle == 0);
    EXPECT_COUNTS(rc, m->hits, m->misses, m->evictions, m->invalidations);
    TAP_EXPECT_EQ(rc->failures, m->failures);
    TAP_EXPECT_EQ(f->errors, 0);
    for (int k = 0; k < m->n_held; k++) {
        const fake_mr_t *mr = &f->mr[m->held[k].mr];
        TAP_EXPECT_EQ(m->held[k].e->invalid, mr->invalid);
        TAP_EXPECT_EQ(m->held[k].e->refcnt, mr->refs);
    }
}

/* n_ops random acquires, releases, invalidations and flushes, each checked
 * against the model; stops at the first failed check. */
static void model_run(uint64_t seed, size_t limit, size_t align, int n_ops)
{
    model_t *m = calloc(1, sizeof(*m));

    if (!m)
        abort();
    rng_seed(&m->rng, seed);
    m->limit = limit;
    m->f = setup(&m->rc, limit, align);
    for (int op = 0; op < n_ops && tap_cur_fails == 0; op++) {
        unsigned r = (unsigned) rng_below(&m->rng, 100);
        m->f->n_op_dereg = 0;
        if (r < 45 && m->n_held < MAX_HELD)
            model_acquire(m);
        else if (r < 90 && m->n_held > 0)
            model_release(m);
        else if (r < 99)
            model_invalidate(m);
        else
            model_flush(m);
        check_state(m);
        if (tap_cur_fails)
            tap_diag("  seed %llu, op %d (r=%u)", (unsigned long long) seed, op, r);
    }
    tap_diag("  %llu hits, %llu misses, %llu failures, %llu evictions, %llu invalidations",
             (unsigned long long) m->hits, (unsigned long long) m->misses,
             (unsigned long long) m->failures, (unsigned long long) m->evictions,
             (unsigned long long) m->invalidations);
    /* the run exercised every path */
    TAP_EXPECT(m->hits > 100 && m->misses > 100 && m->failures > 0 && m->invalidations > 0);
    if (limit < SPACE_SIZE)
        TAP_EXPECT(m->evictions > 0);
    finish(&m->rc, m->f);
    free(m);
}

int main(void)
{
    const uintptr_t A = 0x10000000, B = 0x10010000, C = 0x10020000;
    const uintptr_t D = 0x10030000, E = 0x10040000;

    TAP_TEST("miss, then hits on the same range, a sub-range and the whole entry") {
        ibmc_rcache_t rc;
        fake_t *f = setup(&rc, BIG_LIMIT, PAGE);
        ibmc_rcache_entry_t *e1, *e2, *e3, *e4, *e5, *e6;

        e1 = get(&rc, f, A + 0x100, 3 * PAGE);  /* pages A .. A + 4 pages */
        EXPECT_COUNTS(&rc, 0, 1, 0, 0);
        TAP_EXPECT_EQ(f->n_reg, 1);
        e2 = get(&rc, f, A + 0x100, 3 * PAGE);
        e3 = get(&rc, f, A + 2 * PAGE, 10);
        e4 = get(&rc, f, A, 4 * PAGE);
        TAP_EXPECT(e1 && e2 == e1 && e3 == e1 && e4 == e1);
        TAP_EXPECT_EQ(f->n_reg, 1);
        EXPECT_COUNTS(&rc, 3, 1, 0, 0);
        EXPECT_GAUGES(&rc, 4 * PAGE, 1, 0);
        if (e1)
            TAP_EXPECT_EQ(e1->refcnt, 4);
        put(&rc, f, e1);
        put(&rc, f, e2);
        put(&rc, f, e3);
        put(&rc, f, e4);
        /* unreferenced but kept */
        TAP_EXPECT_EQ(f->n_live, 1);
        EXPECT_GAUGES(&rc, 4 * PAGE, 1, 0);
        /* one byte past either edge is not covered */
        e5 = get(&rc, f, A + 4 * PAGE - 1, 2);
        e6 = get(&rc, f, A - 1, 1);
        TAP_EXPECT(e5 != e1 && e6 != e1);
        TAP_EXPECT_EQ(f->n_reg, 3);
        EXPECT_COUNTS(&rc, 3, 3, 0, 0);
        put(&rc, f, e5);
        put(&rc, f, e6);
        TAP_EXPECT_EQ(rc.failures, 0);
        finish(&rc, f);
        /* the counters outlive destroy */
        EXPECT_COUNTS(&rc, 3, 3, 0, 0);
    }

    TAP_TEST("overlapping entries coexist; a hit takes the most recent, moved to the front") {
        ibmc_rcache_t rc;
        fake_t *f = setup(&rc, BIG_LIMIT, PAGE);
        int small = touch(&rc, f, A, 10);
        int large = touch(&rc, f, A, 2 * PAGE);
        int other = touch(&rc, f, B, 10);

        TAP_EXPECT(small == 0 && large == 1 && other == 2);
        TAP_EXPECT_EQ(idx(f, rc.lru.head), other);
        /* both cover [A, A+10): the larger one was acquired last */
        TAP_EXPECT_EQ(touch(&rc, f, A, 10), large);
        TAP_EXPECT_EQ(idx(f, rc.lru.head), large);
        TAP_EXPECT_EQ(idx(f, rc.lru.tail), small);
        TAP_EXPECT_EQ(touch(&rc, f, A + PAGE, 10), large);
        EXPECT_COUNTS(&rc, 2, 3, 0, 0);
        EXPECT_GAUGES(&rc, 4 * PAGE, 3, 0);
        finish(&rc, f);
    }

    TAP_TEST("a miss registers whole pages; length 0 counts as 1") {
        ibmc_rcache_t rc;
        fake_t *f = setup(&rc, BIG_LIMIT, PAGE);
        ibmc_rcache_entry_t *e = NULL;

        TAP_EXPECT_EQ(touch(&rc, f, A + 0x10, 0x20), 0);
        TAP_EXPECT(f->mr[0].start == A && f->mr[0].end == A + PAGE);
        /* straddling a page boundary */
        TAP_EXPECT_EQ(touch(&rc, f, A + 2 * PAGE - 0x10, 0x20), 1);
        TAP_EXPECT(f->mr[1].start == A + PAGE && f->mr[1].end == A + 3 * PAGE);
        /* page aligned already */
        TAP_EXPECT_EQ(touch(&rc, f, B, 2 * PAGE), 2);
        TAP_EXPECT(f->mr[2].start == B && f->mr[2].end == B + 2 * PAGE);
        TAP_EXPECT_EQ(ibmc_rcache_acquire(&rc, (const void *) (C + 5), 0, NO_LO, NO_HI, &e), 0);
        TAP_EXPECT(e && e->start == C && e->end == C + PAGE);
        if (e)
            ibmc_rcache_release(&rc, e);
        /* the first page was not registered twice */
        TAP_EXPECT_EQ(touch(&rc, f, A + PAGE - 1, 1), 0);
        EXPECT_COUNTS(&rc, 1, 4, 0, 0);
        finish(&rc, f);
    }

    TAP_TEST("a miss grows to align, clipped to [lo, hi) rounded in to pages") {
        static const struct {
            uintptr_t a;
            size_t len;
            uintptr_t lo, hi, start, end;
        } cases[] = {
            /* no bounds: the whole 64 KiB block */
            {0x10023456, 100, NO_LO, NO_HI, 0x10020000, 0x10030000},
            /* unaligned bounds are rounded in to pages */
            {0x10023456, 100, 0x10021800, 0x1002f800, 0x10022000, 0x1002f000},
            {0x10023456, 100, 0x10021000, 0x1002f000, 0x10021000, 0x1002f000},
            /* bounds inside the range's own pages: the pages anyway */
            {0x10023456, 100, 0x10023800, 0x10023900, 0x10023000, 0x10024000},
            {0x10023456, 100, 0x10023456, 0x100234ba, 0x10023000, 0x10024000},
            /* only one side bounded */
            {0x10023456, 100, NO_LO, 0x10025000, 0x10020000, 0x10025000},
            {0x10023456, 100, 0x10022fff, NO_HI, 0x10023000, 0x10030000},
            /* a range across an align boundary grows over both blocks */
            {0x1002fff0, 0x20, NO_LO, NO_HI, 0x10020000, 0x10040000},
            /* a range that is one aligned block already */
            {0x10050000, 0x10000, 0x10050000, 0x10060000, 0x10050000, 0x10060000},
        };
        const size_t n = sizeof(cases) / sizeof(cases[0]);
        ibmc_rcache_t rc;
        fake_t *f = setup(&rc, 0, 0x10000);     /* limit 0: every case misses */

        for (size_t k = 0; k < n; k++) {
            ibmc_rcache_entry_t *e = get_in(&rc, f, cases[k].a, cases[k].len, cases[k].lo,
                                            cases[k].hi);
            int i = idx(f, e);
            if (i < 0 || f->mr[i].start != cases[k].start || f->mr[i].end != cases[k].end) {
                tap_diag("  case %zu: registered [0x%llx, 0x%llx)", k,
                         i < 0 ? 0ULL : (unsigned long long) f->mr[i].start,
                         i < 0 ? 0ULL : (unsigned long long) f->mr[i].end);
                TAP_FAIL("registered range");
            }
            TAP_EXPECT(e == NULL || (e->start == cases[k].start && e->end == cases[k].end));
            put(&rc, f, e);
        }
        EXPECT_COUNTS(&rc, 0, n, n, 0);
        EXPECT_EMPTY(&rc, f);
        finish(&rc, f);

        /* the grown part serves later acquires */
        f = setup(&rc, BIG_LIMIT, 0x10000);
        TAP_EXPECT_EQ(touch(&rc, f, 0x10023456, 100), 0);
        TAP_EXPECT_EQ(touch(&rc, f, 0x1002e000, PAGE), 0);
        TAP_EXPECT_EQ(touch(&rc, f, 0x10020000, 1), 0);
        EXPECT_COUNTS(&rc, 2, 1, 0, 0);
        finish(&rc, f);
    }

    TAP_TEST("limit: the least recently acquired unreferenced entry goes first") {
        ibmc_rcache_t rc;
        fake_t *f = setup(&rc, 3 * PAGE, PAGE);
        int a = touch(&rc, f, A, PAGE), b = touch(&rc, f, B, PAGE), c = touch(&rc, f, C, PAGE);

        TAP_EXPECT_EQ(f->n_live, 3);
        TAP_EXPECT_EQ(touch(&rc, f, A, PAGE), a);       /* A is now the most recent */
        touch(&rc, f, D, PAGE);
        TAP_EXPECT(!f->mr[b].live && f->mr[a].live && f->mr[c].live);
        EXPECT_COUNTS(&rc, 1, 4, 1, 0);
        EXPECT_GAUGES(&rc, 3 * PAGE, 3, 0);
        touch(&rc, f, E, PAGE);
        TAP_EXPECT(!f->mr[c].live && f->mr[a].live);
        /* B comes back as a new registration and pushes A out */
        TAP_EXPECT_EQ(touch(&rc, f, B, PAGE), 5);
        TAP_EXPECT(!f->mr[a].live);
        EXPECT_COUNTS(&rc, 1, 6, 3, 0);
        EXPECT_GAUGES(&rc, 3 * PAGE, 3, 0);
        finish(&rc, f);
    }

    TAP_TEST("limit: referenced entries are never evicted") {
        ibmc_rcache_t rc;
        fake_t *f = setup(&rc, 2 * PAGE, PAGE);
        ibmc_rcache_entry_t *a = get(&rc, f, A, PAGE), *b = get(&rc, f, B, PAGE);
        ibmc_rcache_entry_t *c = get(&rc, f, C, PAGE), *d = get(&rc, f, D, PAGE);

        /* four pages in use over a two-page limit */
        TAP_EXPECT_EQ(f->n_live, 4);
        EXPECT_GAUGES(&rc, 4 * PAGE, 4, 0);
        EXPECT_COUNTS(&rc, 0, 4, 0, 0);
        put(&rc, f, b);         /* the only unreferenced one: goes */
        TAP_EXPECT_EQ(f->n_live, 3);
        TAP_EXPECT(!f->mr[1].live);
        put(&rc, f, a);
        TAP_EXPECT(!f->mr[0].live);
        EXPECT_GAUGES(&rc, 2 * PAGE, 2, 0);
        put(&rc, f, c);         /* within the limit now: kept */
        put(&rc, f, d);
        TAP_EXPECT_EQ(f->n_live, 2);
        EXPECT_COUNTS(&rc, 0, 4, 2, 0);
        /* one entry larger than the limit pushes out the older ones, then itself */
        touch(&rc, f, E, 5 * PAGE);
        EXPECT_EMPTY(&rc, f);
        EXPECT_COUNTS(&rc, 0, 5, 5, 0);
        finish(&rc, f);
    }

    TAP_TEST("limit 0: the last release deregisters, an earlier one does not") {
        ibmc_rcache_t rc;
        fake_t *f = setup(&rc, 0, PAGE);
        ibmc_rcache_entry_t *e1 = get(&rc, f, A, 100), *e2 = get(&rc, f, A + 50, 100);

        TAP_EXPECT(e1 && e2 == e1);
        put(&rc, f, e1);
        TAP_EXPECT_EQ(f->n_live, 1);
        put(&rc, f, e2);
        TAP_EXPECT_EQ(f->n_live, 0);
        TAP_EXPECT_EQ(touch(&rc, f, A, 100), 1);
        EXPECT_EMPTY(&rc, f);
        EXPECT_COUNTS(&rc, 1, 2, 2, 0);
        finish(&rc, f);
    }

    TAP_TEST("invalidate: unreferenced overlapping entries go at once, the rest stay") {
        ibmc_rcache_t rc;
        fake_t *f = setup(&rc, BIG_LIMIT, PAGE);
        int a = touch(&rc, f, A, 2 * PAGE);     /* [A, A + 2 pages) */
        int b = touch(&rc, f, A + 2 * PAGE, PAGE);      /* right after a */
        int c = touch(&rc, f, B, PAGE);

        /* b's range: a ends where it starts, so a is not hit */
        TAP_EXPECT_EQ(ibmc_rcache_invalidate(&rc, (const void *) (A + 2 * PAGE), PAGE), 1);
        TAP_EXPECT(f->mr[a].live && !f->mr[b].live && f->mr[c].live);
        /* ends where c starts: no hit */
        TAP_EXPECT_EQ(ibmc_rcache_invalidate(&rc, (const void *) (B - PAGE), PAGE), 0);
        /* zero length inside c: no hit */
        TAP_EXPECT_EQ(ibmc_rcache_invalidate(&rc, (const void *) (B + 0x800), 0), 0);
        TAP_EXPECT(f->mr[c].live);
        EXPECT_GAUGES(&rc, 3 * PAGE, 2, 0);
        /* a's last byte */
        TAP_EXPECT_EQ(ibmc_rcache_invalidate(&rc, (const void *) (A + 2 * PAGE - 1), 1), 1);
        TAP_EXPECT(!f->mr[a].live && f->mr[c].live);
        EXPECT_COUNTS(&rc, 0, 3, 0, 2);
        EXPECT_GAUGES(&rc, PAGE, 1, 0);
        /* one range over several entries */
        touch(&rc, f, C, PAGE);
        touch(&rc, f, C + 4 * PAGE, PAGE);
        touch(&rc, f, D, PAGE);
        TAP_EXPECT_EQ(ibmc_rcache_invalidate(&rc, (const void *) (B + 1), C + 5 * PAGE - B - 2), 3);
        TAP_EXPECT_EQ(f->n_live, 1);    /* only D */
        TAP_EXPECT(f->mr[5].live);
        EXPECT_COUNTS(&rc, 0, 6, 0, 5);
        EXPECT_GAUGES(&rc, PAGE, 1, 0);
        /* the range is registered afresh */
        TAP_EXPECT_EQ(touch(&rc, f, A, PAGE), 6);
        finish(&rc, f);
    }

    TAP_TEST("invalidate: a referenced entry waits for its release, never returned again") {
        ibmc_rcache_t rc;
        fake_t *f = setup(&rc, BIG_LIMIT, PAGE);
        ibmc_rcache_entry_t *e = get(&rc, f, A, 2 * PAGE), *e2, *e3, *d1, *d2;
        int old = idx(f, e);

        TAP_EXPECT_EQ(ibmc_rcache_invalidate(&rc, (const void *) (A + 0x100), 1), 1);
        TAP_EXPECT(e && e->invalid);
        TAP_EXPECT(f->mr[old].live);
        EXPECT_GAUGES(&rc, 0, 0, 1);
        /* invalid entries are not hit again, by invalidate either */
        TAP_EXPECT_EQ(ibmc_rcache_invalidate(&rc, (const void *) A, PAGE), 0);
        e2 = get(&rc, f, A, 2 * PAGE);
        e3 = get(&rc, f, A + 0x10, 1);
        TAP_EXPECT(e2 && e2 != e && e3 == e2);
        TAP_EXPECT(idx(f, e2) != old);
        EXPECT_COUNTS(&rc, 1, 2, 0, 1);
        EXPECT_GAUGES(&rc, 2 * PAGE, 1, 1);
        put(&rc, f, e);
        TAP_EXPECT(!f->mr[old].live);
        EXPECT_GAUGES(&rc, 2 * PAGE, 1, 0);
        /* two references: the first release keeps it */
        d1 = get(&rc, f, B, PAGE);
        d2 = get(&rc, f, B, PAGE);
        TAP_EXPECT(d1 && d2 == d1);
        TAP_EXPECT_EQ(ibmc_rcache_invalidate(&rc, (const void *) B, PAGE), 1);
        put(&rc, f, d1);
        TAP_EXPECT(f->mr[idx(f, d2)].live);
        EXPECT_GAUGES(&rc, 2 * PAGE, 1, 1);
        put(&rc, f, d2);
        EXPECT_GAUGES(&rc, 2 * PAGE, 1, 0);
        TAP_EXPECT_EQ(f->n_live, 1);
        /* the replacement is a valid entry like any other */
        TAP_EXPECT_EQ(ibmc_rcache_invalidate(&rc, (const void *) A, 1), 1);
        TAP_EXPECT(e2 && e2->invalid && f->mr[1].live);
        put(&rc, f, e2);
        put(&rc, f, e3);
        EXPECT_EMPTY(&rc, f);
        EXPECT_COUNTS(&rc, 2, 3, 0, 3);
        finish(&rc, f);
    }

    TAP_TEST("reg_cb failure: its error comes back and nothing is cached") {
        ibmc_rcache_t rc;
        fake_t *f = setup(&rc, BIG_LIMIT, PAGE);
        ibmc_rcache_entry_t *e = (ibmc_rcache_entry_t *) & rc;  /* not NULL */
        int kept = touch(&rc, f, B, PAGE);

        f->fail_err = EFAULT;
        TAP_EXPECT_EQ(ibmc_rcache_acquire(&rc, (const void *) A, 100, NO_LO, NO_HI, &e), EFAULT);
        TAP_EXPECT(e == NULL);
        TAP_EXPECT_EQ(f->n_reg, 2);
        TAP_EXPECT_EQ(f->n_live, 1);
        EXPECT_COUNTS(&rc, 0, 2, 0, 0);
        TAP_EXPECT_EQ(rc.failures, 1);
        EXPECT_GAUGES(&rc, PAGE, 1, 0);
        /* a reg_cb that sets no code still fails the acquire */
        f->fail_silent = 1;
        TAP_EXPECT_EQ(ibmc_rcache_acquire(&rc, (const void *) A, 100, NO_LO, NO_HI, &e), EIO);
        TAP_EXPECT(e == NULL);
        TAP_EXPECT_EQ(rc.failures, 2);
        /* the next try registers; the entry there before is still hit */
        TAP_EXPECT_EQ(touch(&rc, f, A, 100), 1);
        TAP_EXPECT_EQ(touch(&rc, f, B, 1), kept);
        EXPECT_COUNTS(&rc, 1, 4, 0, 0);
        TAP_EXPECT_EQ(rc.failures, 2);
        EXPECT_GAUGES(&rc, 2 * PAGE, 2, 0);
        finish(&rc, f);
    }

    TAP_TEST("no memory for the entry: ENOMEM and the registration is undone") {
        ibmc_rcache_t rc;
        fake_t *f = setup(&rc, BIG_LIMIT, PAGE);
        ibmc_rcache_entry_t *e = (ibmc_rcache_entry_t *) & rc;

        rc.entry_alloc = no_memory;
        TAP_EXPECT_EQ(ibmc_rcache_acquire(&rc, (const void *) A, 100, NO_LO, NO_HI, &e), ENOMEM);
        TAP_EXPECT(e == NULL);
        TAP_EXPECT_EQ(f->n_reg, 1);
        TAP_EXPECT_EQ(f->n_mr, 1);
        EXPECT_EMPTY(&rc, f);
        EXPECT_COUNTS(&rc, 0, 1, 0, 0);
        TAP_EXPECT_EQ(rc.failures, 1);
        rc.entry_alloc = malloc;
        TAP_EXPECT_EQ(touch(&rc, f, A, 100), 1);
        EXPECT_GAUGES(&rc, PAGE, 1, 0);
        finish(&rc, f);
    }

    TAP_TEST("flush deregisters the unreferenced entries; destroy the rest") {
        ibmc_rcache_t rc;
        fake_t *f = setup(&rc, BIG_LIMIT, PAGE);
        ibmc_rcache_entry_t *a = get(&rc, f, A, PAGE), *dead = get(&rc, f, C, PAGE);
        int b = touch(&rc, f, B, PAGE);

        TAP_EXPECT_EQ(ibmc_rcache_invalidate(&rc, (const void *) C, 1), 1);
        ibmc_rcache_flush(&rc);
        TAP_EXPECT(!f->mr[b].live);
        TAP_EXPECT(f->mr[idx(f, a)].live && f->mr[idx(f, dead)].live);
        EXPECT_COUNTS(&rc, 0, 3, 0, 1);
        EXPECT_GAUGES(&rc, PAGE, 1, 1);
        /* what is referenced still serves */
        TAP_EXPECT_EQ(touch(&rc, f, A + 1, 1), idx(f, a));
        TAP_EXPECT_EQ(f->n_live, 2);
        /* destroy takes the held entry and the invalid one */
        finish(&rc, f);
    }

    TAP_TEST("model: limit 0, no growth, 4000 random operations") {
        model_run(1, 0, PAGE, 4000);
    }

    TAP_TEST("model: limit 8 pages, growth to 4 pages, 4000 random operations") {
        model_run(2, 8 * PAGE, 4 * PAGE, 4000);
    }

    TAP_TEST("model: limit 24 pages, growth to 16 pages, 4000 random operations") {
        model_run(3, 24 * PAGE, 16 * PAGE, 4000);
    }

    TAP_TEST("model: no limit, growth to 2 pages, 4000 random operations") {
        model_run(4, SIZE_MAX, 2 * PAGE, 4000);
    }

    return tap_done();
}
