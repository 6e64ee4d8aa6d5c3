/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Credit-based flow control of eager packets on one RC connection.
 *
 * Each side may have at most `limit` packets outstanding to its peer that the
 * peer has not yet given back: the receiver keeps that many receive buffers
 * posted for every connected peer (the shared receive queue grows with each
 * connection), so a sender that holds a credit can never run the receiver
 * dry, and a receiver-not-ready NAK cannot happen in normal operation.
 * Credits come back piggybacked on every packet going the other way; when
 * traffic is one-sided, the receiver sends an explicit credit packet once
 * `threshold` credits have piled up.  Credit packets themselves need no
 * credit: at most two can be unconsumed at the peer at any time (see
 * ibmc_credit_init), so the receiver reserves two more buffers per
 * connection for them.
 *
 * Pure logic, unit-tested on the host (test/unit/test_credit.c). */

#ifndef IBMC_CREDIT_H_INCLUDED
#define IBMC_CREDIT_H_INCLUDED

#include <stdint.h>

#define IBMC_CREDIT_SPARE 2     /* receive buffers per connection for credit packets */
#define IBMC_CREDIT_MAX 0xffff  /* the wire field is 16 bits */

typedef struct {
    int limit;                  /* credits a peer starts with */
    int avail;                  /* packets we may still send */
    int owed;                   /* packets we received and not yet credited back */
    int threshold;              /* owed credits that justify a credit packet */
} ibmc_credit_t;

void ibmc_credit_init(ibmc_credit_t * c, int limit);

/* Sending: may a data-carrying packet go out now, and account for it. */
static inline int ibmc_credit_can_send(const ibmc_credit_t * c)
{
    return c->avail > 0;
}

void ibmc_credit_consume(ibmc_credit_t * c);

/* The credits to piggyback on an outgoing packet; they are no longer owed. */
int ibmc_credit_take(ibmc_credit_t * c);

/* Receiving: a packet that consumed a credit arrived (its buffer is being
 * reposted), and a packet gave `n` credits back.  Returns -1 if the peer
 * returned more than it was given: a protocol error. */
void ibmc_credit_received(ibmc_credit_t * c);
int ibmc_credit_grant(ibmc_credit_t * c, int n);

/* Should an explicit credit packet be sent now? */
static inline int ibmc_credit_need_update(const ibmc_credit_t * c)
{
    return c->owed >= c->threshold;
}

#endif /* IBMC_CREDIT_H_INCLUDED */
