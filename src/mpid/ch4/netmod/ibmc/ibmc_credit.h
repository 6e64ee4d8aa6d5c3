/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Credit-based flow control of eager packets on one RC connection, with
 * windows lent to peers that stream.  The scheme, and why a sender holding a
 * credit never finds the receiver's shared receive queue empty, is in
 * doc/design.md, "Eager path and credit flow control".
 *
 * What this code keeps true: every credit handed out, lent or not, is backed
 * by a posted receive buffer; credit packets need no credit, and at most two
 * are unconsumed at the peer at any time, hence IBMC_CREDIT_SPARE buffers
 * per connection for them; one lend per connection is in flight at a time.
 *
 * Pure logic, unit-tested on the host (test/unit/test_credit.c). */

#ifndef IBMC_CREDIT_H_INCLUDED
#define IBMC_CREDIT_H_INCLUDED

#include <stdint.h>

#define IBMC_CREDIT_SPARE 2     /* receive buffers per connection for credit packets */
#define IBMC_CREDIT_MAX 0xffff  /* the wire field is 16 bits */

/* The receive buffers of one process, shared by all its connections. */
typedef struct {
    long posted;                /* buffers in the shared receive queue */
    long promised;              /* every connection's window + spares */
    int reclaim;                /* a starved peer at base found nothing to lend, or the
                                 * queue cannot post all promises: shrink lent windows */
} ibmc_credit_pool_t;

typedef struct {
    /* this side as a sender */
    int avail;                  /* packets we may still send */
    int max;                    /* the largest window a peer may lend us */
    int starved;                /* we ran out of credits with more to send */
    /* this side as a receiver of the peer's packets */
    int base;                   /* the window every connection starts with */
    int window;                 /* credits the peer holds, has in flight or is owed */
    int owed;                   /* credits to give back: consumed packets and lent ones */
    int lend_wait;              /* packets to receive before lending again */
    uint64_t lends;             /* how often the window grew (statistics) */
} ibmc_credit_t;

void ibmc_credit_init(ibmc_credit_t * c, int base, int max);

/* The connection's base window and spares are promised out of the pool
 * (the caller posts more buffers while promised > posted). */
void ibmc_credit_pool_connect(ibmc_credit_pool_t * p, const ibmc_credit_t * c);

/* Sending: may a data-carrying packet go out now, and account for it. */
static inline int ibmc_credit_can_send(const ibmc_credit_t * c)
{
    return c->avail > 0;
}

static inline void ibmc_credit_consume(ibmc_credit_t * c)
{
    c->avail--;
}

/* A send had to wait for credits; the next data packet asks for a larger
 * window.  take_starved returns whether to set the flag, and clears it. */
static inline void ibmc_credit_mark_starved(ibmc_credit_t * c)
{
    c->starved = 1;
}

static inline int ibmc_credit_take_starved(ibmc_credit_t * c)
{
    int s = c->starved;
    c->starved = 0;
    return s;
}

/* The credits to piggyback on an outgoing packet; they are no longer owed. */
static inline int ibmc_credit_take(ibmc_credit_t * c)
{
    int n = c->owed > IBMC_CREDIT_MAX ? IBMC_CREDIT_MAX : c->owed;
    c->owed -= n;
    return n;
}

/* Receiving: a packet that consumed a credit arrived (its buffer is being
 * reposted), flagged starved or not; lends or reclaims through the pool. */
void ibmc_credit_received(ibmc_credit_t * c, ibmc_credit_pool_t * p, int starved);

/* A packet gave `n` credits back.  Returns -1 if that makes more than any
 * peer may lend: a protocol error. */
int ibmc_credit_grant(ibmc_credit_t * c, int n);

/* Should an explicit credit packet be sent now?  Half the window, rounded
 * up: the sender does not stall if the update arrives while it sends the
 * other half. */
static inline int ibmc_credit_need_update(const ibmc_credit_t * c)
{
    return c->owed > 0 && 2 * c->owed >= c->window;
}

#endif /* IBMC_CREDIT_H_INCLUDED */
