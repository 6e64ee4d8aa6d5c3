/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Host unit tests of ibmc_mcast_pool.c: which group a communicator's
 * channel takes, agreed from every member's free groups, and the bound on
 * groups held however many communicators come and go. */

#include <stdlib.h>
#include <string.h>
#include "ibmc_mcast_pool.h"
#include "tap.h"
#include "rng.h"

int main(void)
{
    TAP_TEST("a channel takes the lowest group free at every member") {
        uint64_t m[3] = { 0xff, 0xfe, 0xfc };
        int shared = -1;
        TAP_EXPECT_EQ(ibmc_mcast_pool_pick(m, 3, 8, 5, 1, &shared), 2);
        TAP_EXPECT_EQ(shared, 0);
    }

    TAP_TEST("no group free at all members: a shared one, the same for every member") {
        uint64_t m[2] = { 0x1, 0x2 };
        int s1, s2;
        int a = ibmc_mcast_pool_pick(m, 2, 4, 77, 3, &s1);
        uint64_t m2[2] = { 0x2, 0x1 };  /* member order and masks do not matter */
        int b = ibmc_mcast_pool_pick(m2, 2, 4, 77, 3, &s2);
        TAP_EXPECT_EQ(a, b);
        TAP_EXPECT_EQ(s1, 1);
        TAP_EXPECT(a >= 0 && a < 4);
    }

    TAP_TEST("bits past the cap are never taken") {
        uint64_t m[1] = { 0xf0 };
        int shared;
        int k = ibmc_mcast_pool_pick(m, 1, 4, 1, 1, &shared);
        TAP_EXPECT_EQ(shared, 1);
        TAP_EXPECT(k < 4);
        uint64_t full[1] = { ~0ULL };
        TAP_EXPECT_EQ(ibmc_mcast_pool_pick(full, 1, 64, 1, 1, &shared), 0);
        TAP_EXPECT_EQ(shared, 0);
    }

    TAP_TEST("refs make a group busy; the last unref frees it; strays are ignored") {
        ibmc_mcast_pool_t p;
        ibmc_mcast_pool_init(&p, 3);
        TAP_EXPECT_EQ(ibmc_mcast_pool_free_mask(&p), 0x7);
        ibmc_mcast_pool_ref(&p, 1);
        ibmc_mcast_pool_ref(&p, 1);
        TAP_EXPECT_EQ(ibmc_mcast_pool_free_mask(&p), 0x5);
        ibmc_mcast_pool_unref(&p, 1);
        TAP_EXPECT_EQ(ibmc_mcast_pool_free_mask(&p), 0x5);
        ibmc_mcast_pool_unref(&p, 1);
        TAP_EXPECT_EQ(ibmc_mcast_pool_free_mask(&p), 0x7);
        ibmc_mcast_pool_unref(&p, 1);   /* one too many */
        ibmc_mcast_pool_ref(&p, 3);     /* past the cap */
        ibmc_mcast_pool_ref(&p, -1);
        TAP_EXPECT_EQ(ibmc_mcast_pool_free_mask(&p), 0x7);
        ibmc_mcast_pool_init(&p, 0);
        TAP_EXPECT_EQ(p.cap, 1);
        ibmc_mcast_pool_init(&p, 1000);
        TAP_EXPECT_EQ(p.cap, IBMC_MCAST_POOL_MAX);
    }

    TAP_TEST("10,000 communicators over 4 processes: members always agree, never more than cap groups") {
        enum { NP = 4, CAP = 8, LIVE = 12 };
        ibmc_mcast_pool_t p[NP];
        for (int i = 0; i < NP; i++)
            ibmc_mcast_pool_init(&p[i], CAP);
        /* live communicators: members (bitmask of processes) and group */
        struct {
            int used, members, group;
        } live[LIVE];
        memset(live, 0, sizeof(live));
        rng_t rng;
        rng_seed(&rng, 2026);
        int shared_picks = 0, fresh_picks = 0, bad = 0;
        for (uint32_t ctx = 0; ctx < 10000; ctx++) {
            int slot = (int) rng_below(&rng, LIVE);
            if (live[slot].used) {      /* free it at its members */
                for (int i = 0; i < NP; i++)
                    if (live[slot].members >> i & 1)
                        ibmc_mcast_pool_unref(&p[i], live[slot].group);
                live[slot].used = 0;
            }
            int members = (int) rng_below(&rng, (1u << NP) - 1) + 1;
            uint64_t masks[NP];
            int n = 0, k = -1, shared = 0;
            for (int i = 0; i < NP; i++)
                if (members >> i & 1)
                    masks[n++] = ibmc_mcast_pool_free_mask(&p[i]);
            /* every member runs the pick on the same gathered masks */
            for (int i = 0; i < NP; i++) {
                if (!(members >> i & 1))
                    continue;
                int s, g = ibmc_mcast_pool_pick(masks, n, CAP, ctx, ctx * 3 + 1, &s);
                if (k >= 0 && g != k)
                    bad++;
                k = g, shared = s;
                ibmc_mcast_pool_ref(&p[i], g);
            }
            shared ? shared_picks++ : fresh_picks++;
            live[slot].used = 1, live[slot].members = members, live[slot].group = k;
            for (int i = 0; i < NP; i++) {
                int busy = 0;
                for (int g = 0; g < IBMC_MCAST_POOL_MAX; g++)
                    busy += p[i].refs[g] > 0 && g >= CAP;
                bad += busy;
            }
        }
        TAP_EXPECT_EQ(bad, 0);
        /* more live communicators (12) than groups (8): both paths ran */
        TAP_EXPECT(shared_picks > 0);
        TAP_EXPECT(fresh_picks > shared_picks);
        tap_diag("%d fresh groups, %d shared", fresh_picks, shared_picks);
    }

    return tap_done();
}
