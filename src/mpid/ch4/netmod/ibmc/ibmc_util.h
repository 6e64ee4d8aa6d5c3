/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L1 (base): small services every upper layer of the netmod uses and
 * that depend on nothing of it (doc/design.md, "Layer map"). */

#ifndef IBMC_UTIL_H_INCLUDED
#define IBMC_UTIL_H_INCLUDED

#include <stdint.h>
#include <infiniband/verbs.h>

struct MPIDI_IBMC_state;

/* 64 random bits from the kernel: job keys, connection nonces, PSNs */
uint64_t MPIDI_IBMC_random_u64(void);

/* One turn of a wait inside a blocking call: progress everything with the
 * netmod's lock released, so that other threads' operations move too. */
int MPIDI_IBMC_wait_turn(void);
/* The same for a wait that does not hold the netmod's lock (the node
 * segments' collectives, called from MPIR's). */
int MPIDI_IBMC_wait_turn_unlocked(void);
/* One poll of the netmod's own queues, with the netmod's lock held: the
 * multicast engine's poll, and the wait for channels still retiring.  With
 * may_yield, an empty poll may give the core away (MPIR_CVAR_IBMC_PROGRESS_YIELD). */
int MPIDI_IBMC_poll_turn(int may_yield);

/* the world rank whose RC queue pair is qpn, or -1 */
int MPIDI_IBMC_peer_of_qpn(const struct MPIDI_IBMC_state *st, uint32_t qpn);

/* The error of a failed completion, which each owner words: `what` went to
 * or came from world rank `peer` (-1: unknown).  Fatal (see ibmc_err.h):
 * the queue pair is in the error state and what was in flight on it is
 * lost. */
int MPIDI_IBMC_wc_error(const char *what, int peer, const struct ibv_wc *wc);

#endif /* IBMC_UTIL_H_INCLUDED */
