/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* MPI_Barrier as arrivals written into boards and one release over
 * InfiniBand/RoCE hardware multicast
 * (MPIR_CVAR_BARRIER_INTRA_ALGORITHM=ibmc_mcast).
 *
 * Arrival: on a communicator of several nodes, each node's processes meet
 * first (MPIR_Barrier on the node's communicator, shared memory).  The node
 * leaders then report up the tree of the channel (ibmc_mcast_arrive.h):
 * each writes, by RDMA, how many barriers its subtree has entered into its
 * word of its parent's registered board, MPIR_CVAR_IBMC_BARRIER_FANOUT
 * children to a parent, so that 1,024 node leaders report in two steps
 * and no parent, rank 0 included, reads more than that many words.
 * MPICH's dissemination barrier takes log2 of the node count rounds of
 * messages instead.
 *
 * Release: rank 0, once every arrival is in, broadcasts one byte on the
 * channel: one multicast packet among the node leaders, then shared memory
 * inside each node.  No process leaves before that byte reaches it, and
 * rank 0 sends it only after every process has arrived.  A lost release is
 * recovered as any lost broadcast packet is (a NAK, or the root's
 * question), so loss delays a barrier and never opens it early.
 *
 * Where the channel cannot serve the node leaders' communicator (counted
 * in ibmc_mcast_fallbacks), every one of them runs MPICH's dissemination
 * barrier instead, and the barrier stays a barrier. */

#include "mpiimpl.h"
#ifdef HAVE_CH4_NETMOD_IBMC
#include "../../../mpid/ch4/netmod/ibmc/ibmc_coll.h"
#endif

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_IBMC_BARRIER_FANOUT
      category    : CH4_IBMC
      type        : int
      default     : 32
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Children per parent in the tree up which the node leaders report
        their arrival to rank 0 in MPIR_CVAR_BARRIER_INTRA_ALGORITHM=ibmc_mcast
        (at least 2).  Each report is an RDMA write into the parent's
        registered board, which the parent polls: a larger fanout makes the
        tree shallower (32 reaches 1,056 node leaders in two steps) and has
        each parent read more words.  bench/sim/project-barrier.sh compares
        fanouts.  Must be the same at every process; MPI_Init fails on a
        value below 2.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

#ifdef HAVE_CH4_NETMOD_IBMC
/* The barrier among comm's members, one per node. */
static int barrier_flat(MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    int used, mpi_errno = MPIDI_IBMC_mcast_barrier(comm, MPIR_CVAR_IBMC_BARRIER_FANOUT, &used);
    if (mpi_errno == MPI_SUCCESS && !used)
        mpi_errno = MPIR_Barrier_intra_dissemination(comm, errflag);
    return mpi_errno;
}
#endif

int MPIR_Barrier_intra_ibmc_mcast(MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
#ifdef HAVE_CH4_NETMOD_IBMC
    int mpi_errno = MPI_SUCCESS;

    if (comm_ptr->local_size == 1)
        return MPI_SUCCESS;
    if (!MPIR_Comm_is_parent_comm(comm_ptr))
        return barrier_flat(comm_ptr, errflag);
    if (comm_ptr->node_comm) {
        mpi_errno = MPIR_Barrier(comm_ptr->node_comm, errflag);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (comm_ptr->node_roots_comm) {
        mpi_errno = barrier_flat(comm_ptr->node_roots_comm, errflag);
        MPIR_ERR_CHECK(mpi_errno);
    }
    /* the node's leader (its rank 0) releases the node's other processes */
    if (comm_ptr->node_comm) {
        char release = 0;
        mpi_errno = MPIR_Bcast(&release, 1, MPI_BYTE, 0, comm_ptr->node_comm, errflag);
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
#else
    return MPIR_Barrier_intra_dissemination(comm_ptr, errflag);
#endif
}
