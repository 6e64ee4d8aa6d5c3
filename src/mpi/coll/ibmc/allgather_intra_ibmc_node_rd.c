/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* MPI_Allgather over node-shared registered segments
 * (MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=ibmc_node_rd): recursive doubling
 * across nodes, one RDMA write per node pair and round, whatever the number
 * of processes per node (ch4:ibmc's ibmc_node_allgather.c; seed 001).
 *
 * It is reached with the whole communicator (CH4 has no node-aware
 * composition for MPI_Allgather), which is what it needs: it lays every
 * node's processes out in the segments itself, for any placement of ranks.
 * Where the segments cannot serve (one node, MPI not initialized yet, a
 * segment that cannot be created or registered, MPIR_CVAR_IBMC_NODE_SEG
 * false, another device) it runs the stock algorithm that MPICH's default
 * selection would: recursive doubling for a power-of-two communicator,
 * Bruck's for short data, ring for long; on every member alike. */

#include "mpiimpl.h"
#ifdef HAVE_CH4_NETMOD_IBMC
#include "../../../mpid/ch4/netmod/ibmc/ibmc_coll.h"
#endif

/* what MPICH 4.0.2's default tuning chooses for an intra-communicator */
static int stock_allgather(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                           void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                           MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    int n = comm->local_size;
    MPI_Aint type_size;
    MPIR_Datatype_get_size_macro(recvtype, type_size);
    MPI_Aint total = type_size * recvcount * n;
    if ((n & (n - 1)) == 0 && total < 524288)
        return MPIR_Allgather_intra_recursive_doubling(sendbuf, sendcount, sendtype, recvbuf,
                                                       recvcount, recvtype, comm, errflag);
    if (total < 81920)
        return MPIR_Allgather_intra_brucks(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                           recvtype, comm, errflag);
    return MPIR_Allgather_intra_ring(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                     comm, errflag);
}

int MPIR_Allgather_intra_ibmc_node_rd(const void *sendbuf, MPI_Aint sendcount,
                                      MPI_Datatype sendtype, void *recvbuf, MPI_Aint recvcount,
                                      MPI_Datatype recvtype, MPIR_Comm * comm_ptr,
                                      MPIR_Errflag_t * errflag)
{
#ifdef HAVE_CH4_NETMOD_IBMC
    int used = 0;
    int mpi_errno = MPIDI_IBMC_node_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                              recvtype, comm_ptr, &used);
    if (mpi_errno || used)
        return mpi_errno;
#endif
    return stock_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm_ptr,
                           errflag);
}
