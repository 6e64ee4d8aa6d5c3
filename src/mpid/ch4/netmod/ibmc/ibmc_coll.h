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

/* MPI_Allgather over the communicator's node-shared registered segments
 * (ibmc_node_rd), setting them up on first use.  sendbuf may be
 * MPI_IN_PLACE; any datatypes.  *used = 0 when the communicator cannot use
 * them (counted in the ibmc_node_rd_fallbacks pvar, printed with
 * MPIR_CVAR_IBMC_STATS): the caller then runs a stock algorithm, and so
 * does every other member. */
int MPIDI_IBMC_node_allgather(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                              MPIR_Comm * comm, int *used);

#endif /* IBMC_COLL_H_INCLUDED */
