/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* MPI_Barrier as arrivals up a k-nomial tree and one release over
 * InfiniBand/RoCE hardware multicast
 * (MPIR_CVAR_BARRIER_INTRA_ALGORITHM=ibmc_mcast).
 *
 * Arrival: on a communicator of several nodes, each node's processes meet
 * first (MPIR_Barrier on the node's communicator, shared memory), and the
 * node leaders then report up the k-nomial tree of ibmc_knomial.h, of
 * radix MPIR_CVAR_IBMC_BARRIER_TREE_KVAL, to rank 0: a parent posts the
 * empty receives of all its children at once and reports to its own parent
 * when they are in.  Depth log_k of the node count, against log2 rounds for
 * MPICH's dissemination barrier.
 *
 * Release: rank 0, once its tree is in, broadcasts one byte as ibmc_mcast's
 * MPI_Bcast does (bcast_intra_ibmc_mcast.c): one multicast among the node
 * leaders, then shared memory inside each node.  No process leaves before
 * that byte reaches it, and rank 0 sends it only after every process has
 * arrived.  A lost release is recovered as any lost broadcast packet is
 * (a NAK, or the root's question), so loss delays a barrier and never
 * opens it early.  Where the channel cannot serve the communicator, that
 * broadcast runs the binomial tree on every member alike (counted in
 * ibmc_mcast_fallbacks), and the barrier stays a barrier. */

#include "mpiimpl.h"
#include "ibmc_knomial.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_IBMC_BARRIER_TREE_KVAL
      category    : CH4_IBMC
      type        : int
      default     : 4
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Radix of the k-nomial tree up which the node leaders report their
        arrival to rank 0 in MPIR_CVAR_BARRIER_INTRA_ALGORITHM=ibmc_mcast,
        before rank 0 releases everyone with one multicast (at least 2; 2 is
        a binomial tree).  A larger radix makes the tree shallower but has
        each parent take more empty messages one after another
        (bench/sim/project-barrier.sh compares radices).  Must be the same
        at every process; MPI_Init fails on a value below 2.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* Every member's arrival up the k-nomial tree of comm to its rank 0: returns
 * at rank 0 once all have arrived, elsewhere once this process's subtree
 * has arrived and the report to its parent is sent. */
static int arrive_knomial(MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;
    int rank = comm->rank, n = comm->local_size, k = MPIR_CVAR_IBMC_BARRIER_TREE_KVAL;
    MPIR_CHKLMEM_DECL(2);

    int maxc = ibmc_knomial_max_children(n, k);
    int *children;
    MPIR_CHKLMEM_MALLOC(children, int *, sizeof(int) * (maxc > 0 ? maxc : 1), mpi_errno,
                        "children", MPL_MEM_COLL);
    int nc = ibmc_knomial_children(rank, n, k, children, maxc);
    if (nc > 0) {
        MPIR_Request **reqs;
        MPIR_CHKLMEM_MALLOC(reqs, MPIR_Request **, sizeof(MPIR_Request *) * nc, mpi_errno,
                            "child requests", MPL_MEM_COLL);
        for (int i = 0; i < nc; i++) {
            mpi_errno = MPIC_Irecv(NULL, 0, MPI_BYTE, children[i], MPIR_BARRIER_TAG, comm,
                                   &reqs[i]);
            MPIR_ERR_CHECK(mpi_errno);
        }
        mpi_errno = MPIC_Waitall(nc, reqs, MPI_STATUSES_IGNORE, errflag);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (rank != 0) {
        mpi_errno = MPIC_Send(NULL, 0, MPI_BYTE, ibmc_knomial_parent(rank, n, k),
                              MPIR_BARRIER_TAG, comm, errflag);
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    MPIR_CHKLMEM_FREEALL();
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIR_Barrier_intra_ibmc_mcast(MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;

    if (comm_ptr->local_size == 1)
        return MPI_SUCCESS;
    if (MPIR_Comm_is_parent_comm(comm_ptr)) {
        if (comm_ptr->node_comm) {
            mpi_errno = MPIR_Barrier(comm_ptr->node_comm, errflag);
            MPIR_ERR_CHECK(mpi_errno);
        }
        if (comm_ptr->node_roots_comm) {
            mpi_errno = arrive_knomial(comm_ptr->node_roots_comm, errflag);
            MPIR_ERR_CHECK(mpi_errno);
        }
    } else {
        mpi_errno = arrive_knomial(comm_ptr, errflag);
        MPIR_ERR_CHECK(mpi_errno);
    }
    /* one byte, not none: an empty broadcast has nothing to wait for */
    char release = 0;
    mpi_errno = MPIR_Bcast_intra_ibmc_mcast(&release, 1, MPI_BYTE, 0, comm_ptr, errflag);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
