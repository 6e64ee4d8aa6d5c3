/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Entries are malloc'd, unlike the other pure modules, which need no memory
 * of their own: how many registrations are alive depends on the application
 * (every buffer in use holds one, whatever the limit), so a fixed pool would
 * either cap the transfers in flight or waste memory.  Plain malloc because
 * this file includes no MPICH header; the netmod can point entry_alloc and
 * entry_free at wrappers of MPL_malloc and MPL_free.
 *
 * Lookup scans the LRU list from the most recent entry.  The list is short:
 * the limit bounds the unreferenced entries and the transfers in flight bound
 * the referenced ones, and a buffer used again is usually near the front.  An
 * interval tree would pay off only with thousands of entries. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_rcache.h"

static uintptr_t align_down(uintptr_t x, size_t a)
{
    return x & ~(uintptr_t) (a - 1);
}

static uintptr_t align_up(uintptr_t x, size_t a)
{
    return align_down(x + (a - 1), a);
}

static void list_push_front(ibmc_rcache_list_t * l, ibmc_rcache_entry_t * e)
{
    e->prev = NULL;
    e->next = l->head;
    if (l->head)
        l->head->prev = e;
    else
        l->tail = e;
    l->head = e;
}

static void list_remove(ibmc_rcache_list_t * l, ibmc_rcache_entry_t * e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        l->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        l->tail = e->prev;
    e->prev = e->next = NULL;
}

/* Take a valid entry off the LRU list and out of the gauges. */
static void unlink_valid(ibmc_rcache_t * rc, ibmc_rcache_entry_t * e)
{
    list_remove(&rc->lru, e);
    rc->cached_bytes -= e->end - e->start;
    rc->n_entries--;
}

/* Deregister and free an entry that is on no list. */
static void entry_drop(ibmc_rcache_t * rc, ibmc_rcache_entry_t * e)
{
    rc->dereg(rc->ctx, e->handle);
    rc->entry_free(e);
}

/* Deregister unreferenced entries, least recently acquired first, until the
 * valid entries fit in the limit or only referenced ones are left.  Entries
 * in use are skipped: their bytes may keep cached_bytes above the limit. */
static void evict(ibmc_rcache_t * rc)
{
    ibmc_rcache_entry_t *e = rc->lru.tail;

    while (e && rc->cached_bytes > rc->limit) {
        ibmc_rcache_entry_t *newer = e->prev;
        if (e->refcnt == 0) {
            unlink_valid(rc, e);
            entry_drop(rc, e);
            rc->evictions++;
        }
        e = newer;
    }
}

void ibmc_rcache_init(ibmc_rcache_t * rc, size_t limit, size_t page, size_t align,
                      ibmc_rcache_reg_fn reg, ibmc_rcache_dereg_fn dereg, void *ctx)
{
    memset(rc, 0, sizeof(*rc));
    rc->limit = limit;
    rc->page = page ? page : 1;
    rc->align = align > rc->page ? align : rc->page;
    rc->reg = reg;
    rc->dereg = dereg;
    rc->ctx = ctx;
    rc->entry_alloc = malloc;
    rc->entry_free = free;
}

/* The range a miss registers: [a, b) rounded out to pages, grown further to
 * align but not past [lo, hi) rounded in to pages. */
static void miss_range(const ibmc_rcache_t * rc, uintptr_t a, uintptr_t b, uintptr_t lo,
                       uintptr_t hi, uintptr_t * start, uintptr_t * end)
{
    uintptr_t s = align_down(a, rc->page), e = align_up(b, rc->page);
    uintptr_t gs = align_down(a, rc->align), ge = align_up(b, rc->align);
    uintptr_t lo_in = align_up(lo, rc->page), hi_in = align_down(hi, rc->page);

    if (gs < lo_in)
        gs = lo_in;
    if (ge > hi_in)
        ge = hi_in;
    *start = gs < s ? gs : s;
    *end = ge > e ? ge : e;
}

int ibmc_rcache_acquire(ibmc_rcache_t * rc, const void *addr, size_t len, uintptr_t lo,
                        uintptr_t hi, ibmc_rcache_entry_t ** out)
{
    uintptr_t a = (uintptr_t) addr, b = a + (len ? len : 1);
    uintptr_t start, end;
    ibmc_rcache_entry_t *e;
    void *handle;
    int err = 0;

    *out = NULL;
    for (e = rc->lru.head; e; e = e->next) {
        if (e->start <= a && b <= e->end) {
            if (e != rc->lru.head) {
                list_remove(&rc->lru, e);
                list_push_front(&rc->lru, e);
            }
            e->refcnt++;
            rc->hits++;
            *out = e;
            return 0;
        }
    }

    rc->misses++;
    miss_range(rc, a, b, lo, hi, &start, &end);
    handle = rc->reg(rc->ctx, start, end, &err);
    if (!handle) {
        rc->failures++;
        return err ? err : EIO;
    }
    e = rc->entry_alloc(sizeof(*e));
    if (!e) {
        rc->dereg(rc->ctx, handle);
        rc->failures++;
        return ENOMEM;
    }
    e->start = start;
    e->end = end;
    e->handle = handle;
    e->refcnt = 1;
    e->invalid = 0;
    list_push_front(&rc->lru, e);
    rc->cached_bytes += end - start;
    rc->n_entries++;
    /* the new entry is referenced: only older unreferenced ones can go */
    evict(rc);
    *out = e;
    return 0;
}

void ibmc_rcache_release(ibmc_rcache_t * rc, ibmc_rcache_entry_t * e)
{
    if (--e->refcnt > 0)
        return;
    if (e->invalid) {
        list_remove(&rc->dead, e);
        rc->n_dead--;
        entry_drop(rc, e);
    } else {
        evict(rc);
    }
}

int ibmc_rcache_invalidate(ibmc_rcache_t * rc, const void *addr, size_t len)
{
    uintptr_t a = (uintptr_t) addr, b = a + len;
    ibmc_rcache_entry_t *e, *next;
    int n = 0;

    if (len == 0)
        return 0;
    for (e = rc->lru.head; e; e = next) {
        next = e->next;
        if (e->end <= a || b <= e->start)
            continue;
        unlink_valid(rc, e);
        e->invalid = 1;
        n++;
        if (e->refcnt == 0) {
            entry_drop(rc, e);
        } else {
            list_push_front(&rc->dead, e);
            rc->n_dead++;
        }
    }
    rc->invalidations += n;
    return n;
}

void ibmc_rcache_flush(ibmc_rcache_t * rc)
{
    ibmc_rcache_entry_t *e = rc->lru.tail, *newer;

    for (; e; e = newer) {
        newer = e->prev;
        if (e->refcnt == 0) {
            unlink_valid(rc, e);
            entry_drop(rc, e);
        }
    }
}

void ibmc_rcache_destroy(ibmc_rcache_t * rc)
{
    ibmc_rcache_entry_t *e;

    while ((e = rc->lru.tail) != NULL) {
        unlink_valid(rc, e);
        entry_drop(rc, e);
    }
    while ((e = rc->dead.head) != NULL) {
        list_remove(&rc->dead, e);
        rc->n_dead--;
        entry_drop(rc, e);
    }
}
