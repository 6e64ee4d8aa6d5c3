/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The barrier MPI_Finalize runs over RC before PMI's.  PMI's barrier blocks
 * without polling the network, so a process waiting in it takes no RC
 * messages, answers no connection request and no multicast root's
 * question, and gives no credits back.  A peer that still had something
 * for it (a root still serving a retiring channel, a message queued behind
 * a connection handshake) would wait for it until its drain deadline, and
 * fail.  In this barrier every process keeps its progress engine running
 * until every other process has arrived, so what one still needs from
 * another is served first; PMI's barrier then only orders the teardown.
 *
 * The schedule is dissemination (Hensgen, Finkel and Manber, 1988): in
 * round k each process tells the one 2^k ranks after it that it has
 * reached round k, and waits to hear the same from the one 2^k ranks
 * before it.  After ceil(log2 size) rounds every process has heard,
 * directly or not, from every other, with one message per round and
 * 2 ceil(log2 size) peers connected at most.
 *
 * Pure logic, unit-tested on the host (test/unit/test_finbar.c); the
 * netmod carries the messages (ibmc_finalize.c). */

#ifndef IBMC_FINBAR_H_INCLUDED
#define IBMC_FINBAR_H_INCLUDED

#include <stdint.h>

typedef struct {
    int rank, size;
    int rounds;                 /* ceil(log2 size) */
    int round;                  /* the round this process is in; rounds when done */
    int sent;                   /* its message of `round` has gone */
    uint64_t heard;             /* bit k: the message of round k has come */
} ibmc_finbar_t;

typedef enum {
    IBMC_FINBAR_OK = 0,
    IBMC_FINBAR_ERR_ROUND = -1, /* a round this barrier does not have */
    IBMC_FINBAR_ERR_FROM = -2,  /* not from the process that round's message comes from */
    IBMC_FINBAR_ERR_AGAIN = -3  /* that round's message has come already */
} ibmc_finbar_err_t;

/* Any size from 1 (no rounds: done at once) up. */
void ibmc_finbar_init(ibmc_finbar_t * b, int rank, int size);

/* The message this process is to send now: 1 with the peer and round to
 * send to, after which the caller sends it and calls ibmc_finbar_sent; 0
 * when it has sent this round's already or the barrier is done. */
int ibmc_finbar_due(const ibmc_finbar_t * b, int *to, int *round);
void ibmc_finbar_sent(ibmc_finbar_t * b);

/* A message of `round` came from `from`.  It may come before this process
 * has reached that round (or even begun): it is kept.  Anything else than
 * the one message per round from the one expected sender is refused. */
int ibmc_finbar_heard(ibmc_finbar_t * b, int from, int round);

/* Move through every round whose message has been both sent and heard;
 * 1 when the barrier is done. */
int ibmc_finbar_advance(ibmc_finbar_t * b);

const char *ibmc_finbar_strerror(int err);

#endif /* IBMC_FINBAR_H_INCLUDED */
