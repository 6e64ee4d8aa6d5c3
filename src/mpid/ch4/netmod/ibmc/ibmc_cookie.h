/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Cookies: names for local objects that a peer hands back, such as the
 * sender's rendezvous state that comes back in IBMC_PKT_RNDV_FIN.
 *
 * A peer never sees a pointer.  A cookie is a slot index and the slot's
 * generation, and it is bound to the one peer it was given to.  Taking a
 * cookie back frees the slot and moves its generation on, so a cookie that is
 * repeated, replayed from an earlier transfer, invented, or sent by another
 * peer finds nothing: the caller gets NULL and reports a protocol error
 * instead of freeing or calling through whatever the bytes name.
 *
 * Pure logic: no MPICH, no verbs.  Slots are malloc'd (grown by doubling)
 * through alloc hooks the netmod may point at MPL's. */

#ifndef IBMC_COOKIE_H_INCLUDED
#define IBMC_COOKIE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

typedef struct {
    void *obj;                  /* NULL: the slot is free */
    uint32_t gen;               /* bumped each time the slot is freed */
    int32_t owner;              /* the peer the cookie was given to */
    int32_t next_free;
} ibmc_cookie_slot_t;

typedef struct {
    ibmc_cookie_slot_t *slots;
    uint32_t cap;
    uint32_t live;              /* cookies given out and not taken back */
    int32_t free_head;          /* -1: none */
    void *(*realloc_fn) (void *, size_t);
    void (*free_fn) (void *);
} ibmc_cookie_table_t;

/* An empty table using realloc/free. */
void ibmc_cookie_init(ibmc_cookie_table_t * t);

/* Give `obj` (not NULL) a cookie for peer `owner`.  Returns 0, or -1 when
 * memory for more slots cannot be had. */
int ibmc_cookie_put(ibmc_cookie_table_t * t, void *obj, int owner, uint64_t * cookie);

/* The object `cookie` names if `owner` was given it and has not returned it
 * yet; the cookie is then spent.  NULL otherwise, and the table is unchanged. */
void *ibmc_cookie_take(ibmc_cookie_table_t * t, uint64_t cookie, int owner);

/* Free the slots.  Objects still named are the caller's to free first
 * (ibmc_cookie_next_live walks them). */
void ibmc_cookie_destroy(ibmc_cookie_table_t * t);

/* The first live slot at index >= *pos, advancing *pos past it; NULL at the
 * end.  For teardown. */
void *ibmc_cookie_next_live(const ibmc_cookie_table_t * t, uint32_t * pos);

#endif /* IBMC_COOKIE_H_INCLUDED */
