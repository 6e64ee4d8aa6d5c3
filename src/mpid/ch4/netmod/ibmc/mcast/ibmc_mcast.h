/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The hardware-multicast channel as the rest of the netmod sees it: set up
 * in MPI_Init's checks, polled by the progress engine, fed the
 * IBMC_PKT_MCAST packets that arrive on RC, and torn down at
 * MPI_Comm_free and MPI_Finalize.  The broadcast itself is
 * MPIDI_IBMC_mcast_bcast (ibmc_coll.h).
 *
 * The folder: the verbs-free protocol engine (ibmc_mcast_engine.h) and the
 * pure parts it drives, and the netmod's side of it, which
 * ibmc_mcast_impl.h describes. */

#ifndef IBMC_MCAST_H_INCLUDED
#define IBMC_MCAST_H_INCLUDED

#include <stddef.h>

struct MPIDI_IBMC_state;
struct MPIR_Comm;

/* MPI_Init: the CVARs are checked (a bad value is an error naming it) */
int MPIDI_IBMC_mcast_check_cvars(void);
/* the progress engine: completions of the multicast QP, rdma_cm events,
 * ACK boards; *found: how many completions there were */
int MPIDI_IBMC_mcast_poll(struct MPIDI_IBMC_state *st, int *found);
/* an IBMC_PKT_MCAST packet from world rank src */
int MPIDI_IBMC_mcast_recv_rc(struct MPIDI_IBMC_state *st, int src, const char *payload,
                             size_t plen);
/* MPI_Comm_free */
int MPIDI_IBMC_mcast_comm_free(struct MPIR_Comm *comm);
/* MPI_Finalize, first: this process's retiring channels still answer
 * NAKs until every member has acknowledged everything (or a deadline) */
void MPIDI_IBMC_mcast_serve_retiring(struct MPIDI_IBMC_state *st);
/* MPI_Finalize, after the netmod's barrier over RC (ibmc_finalize.c),
 * where every process served its own: all goes but the ACK boards */
void MPIDI_IBMC_mcast_finalize(struct MPIDI_IBMC_state *st);
/* MPI_Finalize, after PMI's barrier: no member writes ACKs any more */
void MPIDI_IBMC_mcast_free(struct MPIDI_IBMC_state *st);

#endif /* IBMC_MCAST_H_INCLUDED */
