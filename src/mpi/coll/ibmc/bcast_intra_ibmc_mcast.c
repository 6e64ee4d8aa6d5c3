/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* MPI_Bcast over InfiniBand/RoCE hardware multicast
 * (MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast).
 *
 * One multicast receiver per node: on a communicator with a node hierarchy
 * the root's data goes to its node's leader, the leaders broadcast it by
 * multicast among themselves (ch4:ibmc's channel, ibmc_coll.h), and each
 * leader passes it on inside its node with MPIR_Bcast, which CH4 serves
 * from shared memory.  CH4's node-aware composition reaches this algorithm
 * with node_roots_comm, where the middle step is all there is.
 *
 * The channel declines a communicator whose members it cannot serve (see
 * ibmc_coll.h); this algorithm then runs the binomial tree, on every member
 * alike. */

#include "mpiimpl.h"
#ifdef HAVE_CH4_NETMOD_IBMC
#include "../../../mpid/ch4/netmod/ibmc/ibmc_coll.h"
#endif

#ifdef HAVE_CH4_NETMOD_IBMC
/* The broadcast among processes that each have a node to themselves. */
static int bcast_flat(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                      MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, used = 0, is_contig;
    MPI_Aint type_size, true_lb, true_extent;

    char *packed = NULL;

    MPIR_Datatype_get_size_macro(datatype, type_size);
    MPI_Aint nbytes = type_size * count;
    MPIR_Datatype_is_contig(datatype, &is_contig);
    if (is_contig) {
        MPIR_Type_get_true_extent_impl(datatype, &true_lb, &true_extent);
        mpi_errno = MPIDI_IBMC_mcast_bcast((char *) buffer + true_lb, nbytes, root, comm, &used);
        MPIR_ERR_CHECK(mpi_errno);
    } else if (nbytes > 0) {
        /* the channel moves bytes: pack at the root, unpack everywhere else */
        MPI_Aint done;
        packed = MPL_malloc(nbytes, MPL_MEM_COLL);
        MPIR_ERR_CHKANDJUMP(!packed, mpi_errno, MPI_ERR_OTHER, "**nomem");
        if (comm->rank == root) {
            mpi_errno = MPIR_Typerep_pack(buffer, count, datatype, 0, packed, nbytes, &done);
            MPIR_ERR_CHECK(mpi_errno);
        }
        mpi_errno = MPIDI_IBMC_mcast_bcast(packed, nbytes, root, comm, &used);
        MPIR_ERR_CHECK(mpi_errno);
        if (used && comm->rank != root) {
            mpi_errno = MPIR_Typerep_unpack(packed, nbytes, buffer, count, datatype, 0, &done);
            MPIR_ERR_CHECK(mpi_errno);
        }
    } else {
        used = 1;               /* nothing to send */
    }
    if (!used)
        mpi_errno = MPIR_Bcast_intra_binomial(buffer, count, datatype, root, comm, errflag);
  fn_fail:
    MPL_free(packed);
    return mpi_errno;
}
#endif

int MPIR_Bcast_intra_ibmc_mcast(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                                MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
#ifdef HAVE_CH4_NETMOD_IBMC
    int mpi_errno = MPI_SUCCESS;
    if (!MPIR_Comm_is_parent_comm(comm_ptr))
        return bcast_flat(buffer, count, datatype, root, comm_ptr, errflag);

    /* the root's node leader gets the data first */
    int intra_root = MPIR_Get_intranode_rank(comm_ptr, root);
    if (comm_ptr->node_comm && intra_root > 0) {
        if (root == comm_ptr->rank) {
            mpi_errno = MPIC_Send(buffer, count, datatype, 0, MPIR_BCAST_TAG, comm_ptr->node_comm,
                                  errflag);
            MPIR_ERR_CHECK(mpi_errno);
        } else if (comm_ptr->node_comm->rank == 0) {
            mpi_errno = MPIC_Recv(buffer, count, datatype, intra_root, MPIR_BCAST_TAG,
                                  comm_ptr->node_comm, MPI_STATUS_IGNORE, errflag);
            MPIR_ERR_CHECK(mpi_errno);
        }
    }
    if (comm_ptr->node_roots_comm) {
        mpi_errno = bcast_flat(buffer, count, datatype, MPIR_Get_internode_rank(comm_ptr, root),
                               comm_ptr->node_roots_comm, errflag);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (comm_ptr->node_comm) {
        mpi_errno = MPIR_Bcast(buffer, count, datatype, 0, comm_ptr->node_comm, errflag);
        MPIR_ERR_CHECK(mpi_errno);
    }
  fn_fail:
    return mpi_errno;
#else
    return MPIR_Bcast_intra_binomial(buffer, count, datatype, root, comm_ptr, errflag);
#endif
}
