/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* A cache of memory registrations for the zero-copy rendezvous protocol.
 *
 * Registering memory with the NIC pins pages and costs far more than a
 * transfer of a few kilobytes, and applications send from the same buffers
 * again and again.  So a registration outlives the transfer that needed it,
 * and a later transfer that falls inside it uses it again.
 *
 * An entry is referenced (refcnt > 0) while a transfer uses it.  Unreferenced
 * entries stay registered until the bytes of all valid entries exceed the
 * limit; then the least recently acquired unreferenced entries are
 * deregistered.  Referenced entries are never deregistered by the limit, so
 * entries in use may hold more than `limit` bytes for a while.
 *
 * When the application's memory goes away the caller invalidates its range:
 * overlapping entries are never handed out again and are deregistered as
 * soon as no transfer uses them.
 *
 * Registration goes through callbacks, so this module is pure logic (no
 * MPICH, no verbs) and is unit-tested without a device.  It is not
 * thread-safe: the caller serializes every call on one cache, and the
 * callbacks must not call back into the cache. */

#ifndef IBMC_RCACHE_H_INCLUDED
#define IBMC_RCACHE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

typedef struct ibmc_rcache_entry {
    uintptr_t start, end;       /* registered range [start, end), page aligned */
    void *handle;               /* what reg_cb returned (an ibv_mr * in the netmod) */
    int refcnt;
    int invalid;                /* overlapped an invalidated range: never returned again */
    struct ibmc_rcache_entry *prev, *next;      /* valid: the LRU list, most recent first;
                                                 * invalid: the dead list */
} ibmc_rcache_entry_t;

/* reg_cb: register [start, end); return a handle or NULL on failure
 * (errno-style code in *err, which is 0 on entry). */
typedef void *(*ibmc_rcache_reg_fn) (void *ctx, uintptr_t start, uintptr_t end, int *err);
typedef void (*ibmc_rcache_dereg_fn) (void *ctx, void *handle);

typedef struct {
    ibmc_rcache_entry_t *head, *tail;
} ibmc_rcache_list_t;

typedef struct ibmc_rcache {
    /* set by ibmc_rcache_init */
    size_t limit;               /* cached_bytes above which unreferenced entries are
                                 * deregistered; 0: every last release deregisters */
    size_t page;                /* alignment of registered ranges, power of two */
    size_t align;               /* a miss grows its range outward to this alignment
                                 * (power of two, >= page), within the acquire's [lo, hi) */
    ibmc_rcache_reg_fn reg;
    ibmc_rcache_dereg_fn dereg;
    void *ctx;                  /* passed to reg and dereg */
    /* Memory for entries: malloc and free, unless the caller sets a matching
     * pair after init (the unit test makes allocation fail this way). */
    void *(*entry_alloc) (size_t size);
    void (*entry_free) (void *p);

    ibmc_rcache_list_t lru;     /* valid entries, most recently acquired first */
    ibmc_rcache_list_t dead;    /* invalid entries still referenced */

    /* counters, cumulative over the cache's life (destroy keeps them) */
    uint64_t hits;              /* acquires served by an existing entry */
    uint64_t misses;            /* acquires that called reg_cb, failed or not */
    uint64_t failures;          /* misses that returned an error (reg_cb or no memory) */
    uint64_t evictions;         /* unreferenced valid entries deregistered by the limit */
    uint64_t invalidations;     /* entries invalidated (sum of ibmc_rcache_invalidate's results) */
    /* gauges */
    uint64_t cached_bytes;      /* sum of end - start of the valid entries */
    uint64_t n_entries;         /* valid entries (the LRU list) */
    uint64_t n_dead;            /* invalid entries waiting for their release (the dead list) */
} ibmc_rcache_t;

/* page and align are powers of two; an align below page counts as page.
 * Addresses are user-space addresses: rounding them up to align must not
 * wrap around. */
void ibmc_rcache_init(ibmc_rcache_t * rc, size_t limit, size_t page, size_t align,
                      ibmc_rcache_reg_fn reg, ibmc_rcache_dereg_fn dereg, void *ctx);

/* Find or create an entry covering [addr, addr+len), len > 0 (0 counts as 1).
 * [lo, hi) bounds how far a miss may grow the registered range beyond page
 * alignment (the caller passes a mapping that is known to be valid, e.g. the
 * brk heap); the page-aligned range itself is always registered even if it
 * pokes outside [lo, hi).  lo = addr, hi = addr + len disables growth;
 * lo = 0, hi = UINTPTR_MAX allows growth up to align.  Returns 0 and *out
 * (refcnt incremented), or the reg_cb error code (EIO if reg_cb set none) or
 * ENOMEM with *out NULL. */
int ibmc_rcache_acquire(ibmc_rcache_t * rc, const void *addr, size_t len, uintptr_t lo,
                        uintptr_t hi, ibmc_rcache_entry_t ** out);

/* refcnt--; an invalid entry is deregistered when that reaches 0, a valid one
 * may be evicted to the limit. */
void ibmc_rcache_release(ibmc_rcache_t * rc, ibmc_rcache_entry_t * e);

/* The memory [addr, addr+len) is gone: every valid entry overlapping it stops
 * being found; those with refcnt 0 are deregistered now, the others when
 * released.  An entry that only touches the range (end == addr) does not
 * overlap it.  Returns how many entries it hit. */
int ibmc_rcache_invalidate(ibmc_rcache_t * rc, const void *addr, size_t len);

/* Deregister every unreferenced valid entry (at finalize, before the
 * protection domain goes).  Not counted as evictions. */
void ibmc_rcache_flush(ibmc_rcache_t * rc);

/* Deregister everything, referenced or not; entries the caller still holds
 * are freed.  The counters stay readable and the cache may be init'd again. */
void ibmc_rcache_destroy(ibmc_rcache_t * rc);

#endif /* IBMC_RCACHE_H_INCLUDED */
