/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* What ibmc's MPIR collective algorithms (src/mpi/coll/ibmc) may call in the
 * netmod, and nothing more: the algorithms never see the channel's state.
 * Every call here is collective over `comm` and gives every member the same
 * answer, so when one member falls back to a stock algorithm, all do. */

#ifndef IBMC_COLL_H_INCLUDED
#define IBMC_COLL_H_INCLUDED

/* Broadcast len bytes at buf (contiguous: the algorithm packs other data)
 * from root over the communicator's
 * hardware-multicast channel, setting it up on first use.  *used = 1 when it
 * did; *used = 0 when this communicator or message cannot use the channel
 * (the reason is counted in the ibmc_mcast_fallbacks pvar and printed with
 * MPIR_CVAR_IBMC_STATS): the caller then runs a stock algorithm, and so does
 * every other member.  comm must have one process per node. */
int MPIDI_IBMC_mcast_bcast(void *buf, MPI_Aint len, int root, MPIR_Comm * comm, int *used);

#endif /* IBMC_COLL_H_INCLUDED */
