/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <stdlib.h>
#include "ibmc_cookie.h"

#define IBMC_COOKIE_FIRST_CAP 64

/* Index 0 of the cookie's low half is never used, so that a zeroed cookie
 * names nothing; generations start at 1 for the same reason. */
static uint64_t make_cookie(uint32_t idx, uint32_t gen)
{
    return ((uint64_t) gen << 32) | (uint64_t) (idx + 1);
}

void ibmc_cookie_init(ibmc_cookie_table_t * t)
{
    t->slots = NULL;
    t->cap = 0;
    t->live = 0;
    t->free_head = -1;
    t->realloc_fn = realloc;
    t->free_fn = free;
}

static int grow(ibmc_cookie_table_t * t)
{
    uint32_t cap = t->cap ? t->cap * 2 : IBMC_COOKIE_FIRST_CAP;
    if (cap <= t->cap || cap > (uint32_t) INT32_MAX)
        return -1;
    ibmc_cookie_slot_t *s = t->realloc_fn(t->slots, sizeof(*s) * cap);
    if (!s)
        return -1;
    /* new slots go on the free list, lowest index first */
    for (uint32_t i = cap; i-- > t->cap;) {
        s[i].obj = NULL;
        s[i].gen = 1;
        s[i].owner = -1;
        s[i].next_free = t->free_head;
        t->free_head = (int32_t) i;
    }
    t->slots = s;
    t->cap = cap;
    return 0;
}

int ibmc_cookie_put(ibmc_cookie_table_t * t, void *obj, int owner, uint64_t * cookie)
{
    if (!obj || (t->free_head < 0 && grow(t)))
        return -1;
    uint32_t idx = (uint32_t) t->free_head;
    ibmc_cookie_slot_t *s = &t->slots[idx];
    t->free_head = s->next_free;
    s->obj = obj;
    s->owner = owner;
    s->next_free = -1;
    t->live++;
    *cookie = make_cookie(idx, s->gen);
    return 0;
}

void *ibmc_cookie_take(ibmc_cookie_table_t * t, uint64_t cookie, int owner)
{
    uint32_t low = (uint32_t) cookie;
    uint32_t gen = (uint32_t) (cookie >> 32);
    if (low == 0 || low > t->cap)
        return NULL;
    uint32_t idx = low - 1;
    ibmc_cookie_slot_t *s = &t->slots[idx];
    if (!s->obj || s->gen != gen || s->owner != owner)
        return NULL;
    void *obj = s->obj;
    s->obj = NULL;
    s->owner = -1;
    /* skip 0 on wrap-around: generation 0 is never handed out */
    s->gen = s->gen + 1 ? s->gen + 1 : 1;
    s->next_free = t->free_head;
    t->free_head = (int32_t) idx;
    t->live--;
    return obj;
}

void *ibmc_cookie_next_live(const ibmc_cookie_table_t * t, uint32_t * pos)
{
    while (*pos < t->cap) {
        void *obj = t->slots[(*pos)++].obj;
        if (obj)
            return obj;
    }
    return NULL;
}

void ibmc_cookie_destroy(ibmc_cookie_table_t * t)
{
    if (t->slots)
        t->free_fn(t->slots);
    t->slots = NULL;
    t->cap = 0;
    t->live = 0;
    t->free_head = -1;
}
