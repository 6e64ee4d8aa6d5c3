/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <string.h>
#include "ibmc_mcast_pool.h"

static inline int in_range(const ibmc_mcast_pool_t * p, int e)
{
    return e >= 0 && e < p->cap;
}

void ibmc_mcast_pool_init(ibmc_mcast_pool_t * p, int cap)
{
    memset(p, 0, sizeof(*p));
    p->cap = cap < 1 ? 1 : cap > IBMC_MCAST_POOL_MAX ? IBMC_MCAST_POOL_MAX : cap;
}

void ibmc_mcast_pool_offer(const ibmc_mcast_pool_t * p, uint32_t leader,
                           ibmc_mcast_pool_offer_t * o)
{
    memset(o, 0, sizeof(*o));
    o->cap = (uint32_t) p->cap;
    uint32_t first = ibmc_mcast_pool_addr(leader, 0);
    for (int e = 0; e < p->cap; e++) {
        const ibmc_mcast_pool_entry_t *x = &p->e[e];
        if (!x->joined) {
            o->room = 2;
            continue;
        }
        if (!x->refs && o->room < 1)
            o->room = 1;
        /* addr - first wraps to a large number for another leader's group */
        uint32_t k = x->addr - first;
        if (k < (uint32_t) p->cap) {
            o->held |= 1ULL << k;
            if (!x->refs)
                o->idle |= 1ULL << k;
        }
    }
}

int ibmc_mcast_pool_pick(const ibmc_mcast_pool_offer_t * offers, int n,
                         ibmc_mcast_pool_kind_t * kind, int *full)
{
    uint32_t cap = IBMC_MCAST_POOL_MAX;
    for (int i = 0; i < n; i++)
        if (offers[i].cap < cap)
            cap = offers[i].cap;
    if (cap < 1)
        cap = 1;
    uint64_t mask = cap == 64 ? ~0ULL : (1ULL << cap) - 1;
    /* the candidates of each rule (ibmc_mcast_pool.h), narrowed member by
     * member; the last shares a busy group that some members must join */
    uint64_t idle = mask, fresh = mask, held = mask, swap = mask, joined = mask;
    *full = -1;
    for (int i = 0; i < n; i++) {
        const ibmc_mcast_pool_offer_t *o = &offers[i];
        idle &= o->idle;
        fresh &= o->idle | (o->room == 2 ? ~o->held : 0);
        held &= o->held;
        swap &= o->idle | (o->room >= 1 ? ~o->held : 0);
        joined &= o->room >= 1 ? ~0ULL : o->held;
        if (*full < 0 && !o->room)
            *full = i;
    }
    const uint64_t pick[] = { idle, fresh, held, swap, joined };
    const ibmc_mcast_pool_kind_t kinds[] = { IBMC_MCAST_POOL_IDLE, IBMC_MCAST_POOL_FRESH,
        IBMC_MCAST_POOL_SHARED, IBMC_MCAST_POOL_SWAP, IBMC_MCAST_POOL_SHARED
    };
    for (int t = 0; t < 5; t++)
        if (pick[t]) {
            *kind = kinds[t];
            *full = -1;
            return __builtin_ctzll(pick[t]);
        }
    /* only a member without room can block the last rule */
    *kind = IBMC_MCAST_POOL_NONE;
    return -1;
}

int ibmc_mcast_pool_place(const ibmc_mcast_pool_t * p, uint32_t addr, int *leave)
{
    int fresh = -1, oldest = -1;
    *leave = 0;
    for (int e = 0; e < p->cap; e++) {
        const ibmc_mcast_pool_entry_t *x = &p->e[e];
        if (x->joined && x->addr == addr)
            return e;
        if (!x->joined && fresh < 0)
            fresh = e;
        if (x->joined && !x->refs && (oldest < 0 || x->idle_since < p->e[oldest].idle_since))
            oldest = e;
    }
    if (fresh >= 0)
        return fresh;
    *leave = oldest >= 0;
    return oldest;
}

void ibmc_mcast_pool_joined(ibmc_mcast_pool_t * p, int e, uint32_t addr)
{
    if (!in_range(p, e))
        return;
    p->e[e].joined = 1;
    p->e[e].addr = addr;
}

void ibmc_mcast_pool_left(ibmc_mcast_pool_t * p, int e)
{
    if (in_range(p, e))
        memset(&p->e[e], 0, sizeof(p->e[e]));
}

void ibmc_mcast_pool_ref(ibmc_mcast_pool_t * p, int e)
{
    if (in_range(p, e) && p->e[e].joined)
        p->e[e].refs++;
}

void ibmc_mcast_pool_unref(ibmc_mcast_pool_t * p, int e)
{
    if (in_range(p, e) && p->e[e].refs > 0 && --p->e[e].refs == 0)
        p->e[e].idle_since = ++p->clock;
}

int ibmc_mcast_pool_held(const ibmc_mcast_pool_t * p)
{
    int n = 0;
    for (int e = 0; e < p->cap; e++)
        n += p->e[e].joined;
    return n;
}
