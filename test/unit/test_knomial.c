/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Unit tests of ibmc_knomial.h, the reduce tree of the ibmc_mcast
 * allreduce: for every n up to 300 and k from 2 to 9, every rank but 0 has
 * one parent, lower than itself, that lists it as a child; a rank's
 * children, in the given order, head consecutive ranges that start right
 * after it and end where its own range ends, so combining them in that
 * order combines the ranks in increasing order (what a non-commutative
 * operation needs); the depth is at most ceil(log_k n) and no rank has more
 * children than ibmc_knomial_max_children says. */

#include <stdio.h>
#include <string.h>
#include "ibmc_knomial.h"
#include "tap.h"

#define NMAX 300
#define CMAX 64

/* one past the last rank of r's subtree, checking contiguity on the way;
 * *bad counts ranges that do not join */
static int range_end(int r, int n, int k, int *bad, int *depth, int level)
{
    int ch[CMAX];
    int nc = ibmc_knomial_children(r, n, k, ch, CMAX);
    int end = r + 1;
    if (level > *depth)
        *depth = level;
    for (int i = 0; i < nc && i < CMAX; i++) {
        if (ch[i] != end)
            (*bad)++;
        end = range_end(ch[i], n, k, bad, depth, level + 1);
    }
    return end;
}

int main(void)
{
    TAP_TEST("every rank but 0 has one parent, below it, that lists it as a child") {
        static int seen[NMAX];
        for (int k = 2; k <= 9; k++)
            for (int n = 1; n <= NMAX; n++) {
                memset(seen, 0, sizeof(seen));
                TAP_EXPECT_EQ(ibmc_knomial_parent(0, n, k), -1);
                for (int r = 0; r < n; r++) {
                    int ch[CMAX];
                    int nc = ibmc_knomial_children(r, n, k, ch, CMAX);
                    TAP_EXPECT(nc <= ibmc_knomial_max_children(n, k));
                    for (int i = 0; i < nc; i++) {
                        seen[ch[i]]++;
                        if (ibmc_knomial_parent(ch[i], n, k) != r)
                            TAP_FAIL("a child whose parent is another rank");
                    }
                }
                for (int r = 1; r < n; r++) {
                    int p = ibmc_knomial_parent(r, n, k);
                    if (seen[r] != 1 || p < 0 || p >= r) {
                        tap_diag("n %d k %d rank %d: parent %d, listed %d times", n, k, r, p,
                                 seen[r]);
                        TAP_FAIL("rank without exactly one parent below it");
                    }
                }
                TAP_EXPECT_EQ(seen[0], 0);
            }
    }

    TAP_TEST("children head consecutive ranges in order; depth at most ceil(log_k n)") {
        for (int k = 2; k <= 9; k++)
            for (int n = 1; n <= NMAX; n++) {
                /* a rank's depth is its count of nonzero base-k digits */
                int bad = 0, depth = 0, want = 0, levels = 0;
                for (long long m = 1; m < n; m *= k)
                    levels++;
                for (int r = 0; r < n; r++) {
                    int d = 0;
                    for (int x = r; x; x /= k)
                        d += x % k != 0;
                    want = d > want ? d : want;
                }
                TAP_EXPECT_EQ(range_end(0, n, k, &bad, &depth, 0), n);
                TAP_EXPECT_EQ(bad, 0);
                TAP_EXPECT_EQ(depth, want);
                TAP_EXPECT(depth <= levels);
            }
    }

    TAP_TEST("a binomial tree (k = 2) of 8: rank 0 has 1, 2, 4; rank 4 has 5, 6") {
        int ch[CMAX];
        TAP_EXPECT_EQ(ibmc_knomial_children(0, 8, 2, ch, CMAX), 3);
        TAP_EXPECT(ch[0] == 1 && ch[1] == 2 && ch[2] == 4);
        TAP_EXPECT_EQ(ibmc_knomial_children(4, 8, 2, ch, CMAX), 2);
        TAP_EXPECT(ch[0] == 5 && ch[1] == 6);
        TAP_EXPECT_EQ(ibmc_knomial_parent(6, 8, 2), 4);
        TAP_EXPECT_EQ(ibmc_knomial_children(0, 16, 4, ch, CMAX), 6);
        TAP_EXPECT(ch[0] == 1 && ch[2] == 3 && ch[3] == 4 && ch[5] == 12);
    }
    return tap_done();
}
