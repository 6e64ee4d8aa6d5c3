/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Credit-based flow control of eager packets on one RC connection, with
 * windows that grow for peers that stream.
 *
 * Each side may have at most as many packets outstanding to its peer as the
 * peer has given it credits.  The receiver keeps a receive buffer posted for
 * every credit it has handed out (the peer's `window`): a sender that holds
 * a credit can never run the receiver dry, and a receiver-not-ready NAK
 * cannot happen in normal operation.  Credits come back piggybacked on every
 * packet going the other way; when traffic is one-sided, the receiver sends
 * an explicit credit packet once half the window is owed.  Credit packets
 * themselves need no credit: at most two can be unconsumed at the peer at
 * any time (the model in test_credit.c checks it, lending included), so the
 * receiver reserves IBMC_CREDIT_SPARE more buffers per connection for them.
 *
 * Windows.  Every connection starts with `base` credits, backed by buffers
 * the shared receive queue keeps posted for it (it grows by base + spare
 * buffers per connection once its first pool is promised).  A window of
 * base packets caps a streaming peer at base packets per round trip, so a
 * sender that ran out of credits with more to send says so in its next
 * packet (IBMC_PKT_F_STARVED), and the receiver lends it up to `base` more
 * credits, up to `max`, out of posted buffers that no connection has been
 * promised (ibmc_credit_pool_t); a smaller pool lends what it has.  A
 * process talking to a few peers lets them use its idle pool, a process
 * talking to many keeps each near base; the pool's size limit is the same
 * either way, though lent buffers may make a later connection post its
 * chunk sooner.  One lend is in flight at a time: the next waits until the
 * peer has sent a window's worth of packets, which it can only do once the
 * lent credits reached it, so the credit packets that carry lends keep the
 * two-packet bound above.  When a starved peer at base finds the pool
 * empty, the pool asks for buffers back: every window above base shrinks
 * as its peer's packets arrive (one credit is not returned per packet)
 * until it is at base again.  Every credit ever handed out, lent or not,
 * stays backed by a posted buffer, so growth keeps the no-RNR guarantee.
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
