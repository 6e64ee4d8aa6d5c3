/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The k-nomial tree of the ibmc_mcast allreduce's reduce step, rooted at
 * rank 0 of n ranks: a rank's parent is the rank with its lowest nonzero
 * base-k digit cleared; its children are the ranks that add one nonzero
 * digit below its own lowest one.  A child c = r + j * k^l heads the ranks
 * c .. c + k^l - 1, so a rank that combines its own value with its
 * children's results in the order ibmc_knomial_children gives them (level
 * by level from k^0, each level by j) combines ranks r, r + 1, r + 2, ...
 * in increasing order: the tree keeps a non-commutative operation's rank
 * order.  The depth is at most ceil(log_k n), against log2 n for a
 * binomial tree (k = 2); a parent receives up to k - 1 children a level,
 * all posted at once.
 *
 * Pure logic: the algorithm (allreduce_intra_ibmc_mcast.c), the simulator's
 * port of it (bench/sim/smpi_allreduce.c) and test/unit/test_knomial.c
 * include it. */

#ifndef IBMC_KNOMIAL_H_INCLUDED
#define IBMC_KNOMIAL_H_INCLUDED

/* Rank r's parent, or -1 for the root (r == 0); k >= 2, 0 <= r < n. */
static inline int ibmc_knomial_parent(int r, int n, int k)
{
    (void) n;
    for (long long m = 1; r > 0; m *= k) {
        long long digit = (r / m) % k;
        if (digit)
            return (int) (r - digit * m);
    }
    return -1;
}

/* Rank r's children in the order a parent combines them (each heads the
 * ranks right after the previous one's); writes at most max of them into
 * children and returns how many r has (more than max: the caller's array
 * was too small). */
static inline int ibmc_knomial_children(int r, int n, int k, int *children, int max)
{
    int count = 0;
    for (long long m = 1; m < n && r % (m * k) == 0; m *= k) {
        for (int j = 1; j < k; j++) {
            long long c = r + j * m;
            if (c >= n)
                break;
            if (count < max)
                children[count] = (int) c;
            count++;
        }
    }
    return count;
}

/* The most children any rank of n has: (k - 1) a level, ceil(log_k n)
 * levels. */
static inline int ibmc_knomial_max_children(int n, int k)
{
    int levels = 0;
    for (long long m = 1; m < n; m *= k)
        levels++;
    return levels * (k - 1);
}

#endif /* IBMC_KNOMIAL_H_INCLUDED */
