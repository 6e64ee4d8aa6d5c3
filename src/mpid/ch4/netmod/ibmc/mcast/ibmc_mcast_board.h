/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The ACK board: where members' ACKs to this process land as RDMA writes
 * (seed 000 §5.5), instead of arriving as RC messages.
 *
 * Every member of a channel registers a board of one 8-byte word per member
 * and tells the others its address and key when the channel is set up.  A
 * member acknowledges to a root or co-root by writing its cumulative
 * position into its own word of that process's board; the owner polls the
 * words from its progress loop.  A write costs the owner no receive buffer,
 * no RC credit and no completion, and a later ACK simply overwrites an
 * earlier one that was not yet read: ACKs are cumulative, so only the
 * newest matters.  What a word says is always the same kind of position
 * for a given writer and owner (its own, or, when the writer is the owner's
 * co-root, its subgroup's; ibmc_mcast_coroot.h), so a word only grows.
 *
 * A word is the channel's epoch in its high half and the position in its
 * low half.  Boards are reused by later channels, and a member of an old
 * channel may still write into one (an ACK that was in flight when the
 * owner let the channel go).  Its word then carries another epoch: the
 * owner counts it as foreign, takes nothing from it, and reports it once,
 * so that the caller can ask that member of the new channel for its ACK
 * again in case the late write covered one.  A write that tears between
 * the halves mixes two words of the same epoch, so it reads as one of the
 * two positions.  A zero word was never written.
 *
 * Pure logic, unit-tested on the host (test/unit/test_mcast_board.c). */

#ifndef IBMC_MCAST_BOARD_H_INCLUDED
#define IBMC_MCAST_BOARD_H_INCLUDED

#include <stdint.h>

typedef struct {
    volatile uint64_t *words;   /* nmembers: written by the members, remotely */
    uint64_t *seen;             /* nmembers: the word last taken from each */
    int nmembers;
    uint32_t epoch;
    uint64_t taken;             /* words that said something new */
    uint64_t foreign;           /* words of another epoch */
} ibmc_mcast_board_t;

/* The word that says "delivered every position below pos" in epoch. */
static inline uint64_t ibmc_mcast_board_word(uint32_t epoch, uint32_t pos)
{
    return ((uint64_t) epoch << 32) | pos;
}

/* words and seen have nmembers entries each, owned by the caller; both are
 * cleared. */
void ibmc_mcast_board_init(ibmc_mcast_board_t * b, volatile uint64_t * words, uint64_t * seen,
                           int nmembers, uint32_t epoch);

/* What member m's word says now: 1 and *pos when it changed since last
 * taken and is of this epoch; 0 when it has not changed (or was never
 * written); -1 the first time it holds a word of another epoch. */
int ibmc_mcast_board_take(ibmc_mcast_board_t * b, int m, uint32_t * pos);

#endif /* IBMC_MCAST_BOARD_H_INCLUDED */
