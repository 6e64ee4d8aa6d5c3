/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include "ibmc_finbar.h"

void ibmc_finbar_init(ibmc_finbar_t * b, int rank, int size)
{
    b->rank = rank;
    b->size = size;
    b->rounds = 0;
    while (b->rounds < 62 && ((int64_t) 1 << b->rounds) < size)
        b->rounds++;
    b->round = 0;
    b->sent = 0;
    b->heard = 0;
}

/* 2^k mod size, then the peer that far after (dir 1) or before (dir -1). */
static int peer(const ibmc_finbar_t * b, int k, int dir)
{
    int64_t d = ((int64_t) 1 << k) % b->size;
    return (int) ((b->rank + dir * d + b->size) % b->size);
}

int ibmc_finbar_due(const ibmc_finbar_t * b, int *to, int *round)
{
    if (b->round >= b->rounds || b->sent)
        return 0;
    *to = peer(b, b->round, 1);
    *round = b->round;
    return 1;
}

void ibmc_finbar_sent(ibmc_finbar_t * b)
{
    b->sent = 1;
}

int ibmc_finbar_heard(ibmc_finbar_t * b, int from, int round)
{
    if (round < 0 || round >= b->rounds)
        return IBMC_FINBAR_ERR_ROUND;
    if (from != peer(b, round, -1))
        return IBMC_FINBAR_ERR_FROM;
    if (b->heard & ((uint64_t) 1 << round))
        return IBMC_FINBAR_ERR_AGAIN;
    b->heard |= (uint64_t) 1 << round;
    return IBMC_FINBAR_OK;
}

int ibmc_finbar_advance(ibmc_finbar_t * b)
{
    /* a round ends when this process has told its peer and heard its own:
     * hearing round k early says nothing about round k-1's sender */
    while (b->round < b->rounds && b->sent && (b->heard & ((uint64_t) 1 << b->round))) {
        b->round++;
        b->sent = 0;
    }
    return b->round >= b->rounds;
}

const char *ibmc_finbar_strerror(int err)
{
    switch (err) {
        case IBMC_FINBAR_OK:
            return "no error";
        case IBMC_FINBAR_ERR_ROUND:
            return "a finalize barrier message of a round the barrier does not have";
        case IBMC_FINBAR_ERR_FROM:
            return "a finalize barrier message from a process that does not send that round's";
        case IBMC_FINBAR_ERR_AGAIN:
            return "a second finalize barrier message of the same round";
        default:
            return "an unknown finalize barrier error";
    }
}
