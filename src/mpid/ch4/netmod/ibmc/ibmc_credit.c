/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include "ibmc_credit.h"

void ibmc_credit_init(ibmc_credit_t * c, int limit)
{
    c->limit = limit;
    c->avail = limit;
    c->owed = 0;
    /* Half the window, rounded up.  The sender does not stall if the update
     * arrives while it sends the other half; and between two polls of the
     * peer we receive at most `limit` packets from it on top of fewer than
     * `threshold` already owed, which makes at most
     * (threshold - 1 + limit) / threshold = 2 credit packets: the
     * IBMC_CREDIT_SPARE buffers (test/unit/test_credit.c checks it). */
    c->threshold = (limit + 1) / 2 > 0 ? (limit + 1) / 2 : 1;
}

void ibmc_credit_consume(ibmc_credit_t * c)
{
    c->avail--;
}

int ibmc_credit_take(ibmc_credit_t * c)
{
    int n = c->owed > IBMC_CREDIT_MAX ? IBMC_CREDIT_MAX : c->owed;
    c->owed -= n;
    return n;
}

void ibmc_credit_received(ibmc_credit_t * c)
{
    c->owed++;
}

int ibmc_credit_grant(ibmc_credit_t * c, int n)
{
    if (n < 0 || c->avail + n > c->limit)
        return -1;
    c->avail += n;
    return 0;
}
