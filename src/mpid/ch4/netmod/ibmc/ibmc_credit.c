/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include "ibmc_credit.h"

void ibmc_credit_init(ibmc_credit_t * c, int base, int max)
{
    c->avail = base;
    c->max = max;
    c->starved = 0;
    c->base = base;
    c->window = base;
    c->owed = 0;
    c->lends = 0;
    c->lend_wait = 0;
}

void ibmc_credit_pool_connect(ibmc_credit_pool_t * p, const ibmc_credit_t * c)
{
    p->promised += c->base + IBMC_CREDIT_SPARE;
}

void ibmc_credit_received(ibmc_credit_t * c, ibmc_credit_pool_t * p, int starved)
{
    if (c->lend_wait > 0)
        c->lend_wait--;
    if (p->reclaim && c->window > c->base) {
        /* keep this packet's credit: the window shrinks by one and its
         * buffer goes back to the pool */
        c->window--;
        p->promised--;
        return;
    }
    c->owed++;
    if (!starved || c->window >= c->max || c->lend_wait > 0)
        return;
    /* base more, or what is left below max or in the pool */
    long step = c->base;
    if (step > c->max - c->window)
        step = c->max - c->window;
    if (step > p->posted - p->promised)
        step = p->posted - p->promised;
    if (step > 0) {
        c->window += (int) step;
        c->owed += (int) step;
        c->lends++;
        p->promised += step;
        p->reclaim = 0;
        /* the peer can only send more than the window's worth of packets
         * after it has the lent credits: until then a starved flag asks
         * for credits that are already on their way */
        c->lend_wait = c->window;
    } else if (c->window == c->base) {
        /* a peer above base already has more than its share */
        p->reclaim = 1;
    }
}

int ibmc_credit_grant(ibmc_credit_t * c, int n)
{
    if (n < 0 || c->avail + n > c->max)
        return -1;
    c->avail += n;
    return 0;
}
