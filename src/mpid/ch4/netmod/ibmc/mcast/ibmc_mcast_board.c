/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include "ibmc_mcast_board.h"

void ibmc_mcast_board_init(ibmc_mcast_board_t * b, volatile uint64_t * words, uint64_t * seen,
                           int nmembers, uint32_t epoch)
{
    b->words = words;
    b->seen = seen;
    b->nmembers = nmembers;
    b->epoch = epoch;
    b->taken = 0;
    b->foreign = 0;
    for (int m = 0; m < nmembers; m++) {
        words[m] = 0;
        seen[m] = 0;
    }
}

int ibmc_mcast_board_take(ibmc_mcast_board_t * b, int m, uint32_t * pos)
{
    if (m < 0 || m >= b->nmembers)
        return 0;
    /* one load: the word may change under us */
    uint64_t w = b->words[m];
    if (w == b->seen[m] || w == 0)
        return 0;
    b->seen[m] = w;
    if ((uint32_t) (w >> 32) != b->epoch) {
        b->foreign++;
        return -1;
    }
    b->taken++;
    *pos = (uint32_t) w;
    return 1;
}
