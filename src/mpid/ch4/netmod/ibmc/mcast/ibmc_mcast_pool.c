/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <string.h>
#include "ibmc_mcast_pool.h"

void ibmc_mcast_pool_init(ibmc_mcast_pool_t * p, int cap)
{
    memset(p, 0, sizeof(*p));
    p->cap = cap < 1 ? 1 : cap > IBMC_MCAST_POOL_MAX ? IBMC_MCAST_POOL_MAX : cap;
}

uint64_t ibmc_mcast_pool_free_mask(const ibmc_mcast_pool_t * p)
{
    uint64_t m = 0;
    for (int k = 0; k < p->cap; k++)
        if (!p->refs[k])
            m |= 1ULL << k;
    return m;
}

int ibmc_mcast_pool_pick(const uint64_t * masks, int n, int cap, uint32_t context_id,
                         uint32_t epoch, int *shared)
{
    if (cap < 1)
        cap = 1;
    if (cap > IBMC_MCAST_POOL_MAX)
        cap = IBMC_MCAST_POOL_MAX;
    uint64_t all = cap == 64 ? ~0ULL : (1ULL << cap) - 1;
    for (int i = 0; i < n; i++)
        all &= masks[i];
    if (all) {
        *shared = 0;
        return __builtin_ctzll(all);
    }
    /* every member computes the same mix of the same two numbers */
    uint64_t h = ((uint64_t) context_id << 32) ^ epoch;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    *shared = 1;
    return (int) (h % (uint64_t) cap);
}

void ibmc_mcast_pool_ref(ibmc_mcast_pool_t * p, int k)
{
    if (k >= 0 && k < p->cap)
        p->refs[k]++;
}

void ibmc_mcast_pool_unref(ibmc_mcast_pool_t * p, int k)
{
    if (k >= 0 && k < p->cap && p->refs[k] > 0)
        p->refs[k]--;
}
