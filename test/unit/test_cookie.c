/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Unit tests of ibmc_cookie: what a peer sends back in place of a pointer
 * (the rendezvous FIN) must name a live object of that peer's exactly once.
 * Forged, repeated, stale and other peers' cookies find nothing. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_cookie.h"
#include "tap.h"
#include "rng.h"

static int fail_realloc;
static void *flaky_realloc(void *p, size_t n)
{
    return fail_realloc ? NULL : realloc(p, n);
}

int main(void)
{
    ibmc_cookie_table_t t;
    int objs[1000];

    TAP_TEST("a cookie names its object once, for its owner only") {
        uint64_t c;
        ibmc_cookie_init(&t);
        TAP_EXPECT_EQ(ibmc_cookie_put(&t, &objs[0], 3, &c), 0);
        TAP_EXPECT(c != 0);
        TAP_EXPECT(ibmc_cookie_take(&t, c, 4) == NULL);     /* another peer */
        TAP_EXPECT_EQ(t.live, 1);
        TAP_EXPECT(ibmc_cookie_take(&t, c, 3) == &objs[0]);
        TAP_EXPECT(ibmc_cookie_take(&t, c, 3) == NULL);     /* repeated FIN */
        TAP_EXPECT_EQ(t.live, 0);
        ibmc_cookie_destroy(&t);
    }

    TAP_TEST("a reused slot does not answer to the old cookie") {
        uint64_t c1, c2;
        ibmc_cookie_init(&t);
        ibmc_cookie_put(&t, &objs[1], 0, &c1);
        ibmc_cookie_take(&t, c1, 0);
        ibmc_cookie_put(&t, &objs[2], 0, &c2);
        TAP_EXPECT((uint32_t) c1 == (uint32_t) c2);         /* same slot ... */
        TAP_EXPECT(c1 != c2);                               /* ... new generation */
        TAP_EXPECT(ibmc_cookie_take(&t, c1, 0) == NULL);    /* replay of the old FIN */
        TAP_EXPECT(ibmc_cookie_take(&t, c2, 0) == &objs[2]);
        ibmc_cookie_destroy(&t);
    }

    TAP_TEST("zero, out-of-range and pointer-shaped cookies name nothing") {
        uint64_t c;
        ibmc_cookie_init(&t);
        ibmc_cookie_put(&t, &objs[3], 1, &c);
        TAP_EXPECT(ibmc_cookie_take(&t, 0, 1) == NULL);
        TAP_EXPECT(ibmc_cookie_take(&t, ((uint64_t) 1 << 32) | 0xffffffffu, 1) == NULL);
        TAP_EXPECT(ibmc_cookie_take(&t, (uint64_t) (uintptr_t) &objs[3], 1) == NULL);
        TAP_EXPECT(ibmc_cookie_take(&t, c ^ ((uint64_t) 1 << 40), 1) == NULL);
        TAP_EXPECT_EQ(t.live, 1);
        TAP_EXPECT(ibmc_cookie_take(&t, c, 1) == &objs[3]);
        ibmc_cookie_destroy(&t);
    }

    TAP_TEST("the table grows, and running out of memory is reported, not fatal") {
        uint64_t c[1000];
        int bad = 0;
        ibmc_cookie_init(&t);
        t.realloc_fn = flaky_realloc;
        for (int i = 0; i < 1000; i++)
            bad |= ibmc_cookie_put(&t, &objs[i], i % 7, &c[i]) != 0;
        TAP_EXPECT(!bad);
        TAP_EXPECT_EQ(t.live, 1000);
        fail_realloc = 1;
        uint64_t more;
        /* the table is full at a power of two; one more needs memory */
        while (t.live < t.cap)
            ibmc_cookie_put(&t, &objs[0], 0, &more);
        TAP_EXPECT_EQ(ibmc_cookie_put(&t, &objs[0], 0, &more), -1);
        fail_realloc = 0;
        for (int i = 0; i < 1000; i++)
            bad |= ibmc_cookie_take(&t, c[i], i % 7) != &objs[i];
        TAP_EXPECT(!bad);
        ibmc_cookie_destroy(&t);
    }

    TAP_TEST("random puts, takes and forgeries: every object comes back exactly once") {
        enum { N = 512, STEPS = 200000 };
        uint64_t cookie[N];
        int owner[N], live[N] = { 0 };
        uint64_t old[64];
        int n_old = 0, errors = 0;
        rng_t r;
        rng_seed(&r, 11);
        ibmc_cookie_init(&t);
        for (int s = 0; s < STEPS; s++) {
            int i = (int) rng_below(&r, N);
            int op = (int) rng_below(&r, 4);
            if (op == 0 && !live[i]) {
                owner[i] = (int) rng_below(&r, 5);
                errors += ibmc_cookie_put(&t, &objs[i], owner[i], &cookie[i]) != 0;
                live[i] = 1;
            } else if (op == 1 && live[i]) {
                errors += ibmc_cookie_take(&t, cookie[i], owner[i]) != &objs[i];
                live[i] = 0;
                old[n_old++ % 64] = cookie[i];
            } else if (op == 2 && n_old) {
                /* a spent cookie must not name anything, whoever sends it */
                uint64_t c = old[rng_below(&r, n_old < 64 ? n_old : 64)];
                for (int o = 0; o < 5; o++) {
                    void *got = ibmc_cookie_take(&t, c, o);
                    if (got) {
                        int k = (int) ((int *) got - objs);
                        /* only legal if the spent cookie equals a live one */
                        errors += !(live[k] && cookie[k] == c && owner[k] == o);
                        if (live[k] && cookie[k] == c && owner[k] == o)
                            live[k] = 0;
                    }
                }
            } else if (op == 3) {
                uint64_t c = rng_next(&r);
                void *got = ibmc_cookie_take(&t, c, (int) rng_below(&r, 5));
                if (got) {
                    int k = (int) ((int *) got - objs);
                    errors += !(live[k] && cookie[k] == c);
                    live[k] = 0;
                }
            }
        }
        unsigned n_live = 0;
        for (int i = 0; i < N; i++)
            n_live += live[i];
        TAP_EXPECT_EQ(errors, 0);
        TAP_EXPECT_EQ(t.live, n_live);
        uint32_t pos = 0;
        unsigned walked = 0;
        while (ibmc_cookie_next_live(&t, &pos))
            walked++;
        TAP_EXPECT_EQ(walked, n_live);
        ibmc_cookie_destroy(&t);
    }

    return tap_done();
}
