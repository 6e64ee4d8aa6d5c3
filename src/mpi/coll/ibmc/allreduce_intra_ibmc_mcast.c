/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* MPI_Allreduce of small messages as a reduce to rank 0 followed by the
 * result's broadcast over InfiniBand/RoCE hardware multicast
 * (MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=ibmc_mcast).
 *
 * Every process receives the bytes rank 0 computed, so the identical
 * results MPI requires of an allreduce hold by construction, for every
 * operation and datatype on any number of processes.
 *
 * The reduce is MPICH's own MPIR_Reduce, node-aware where CH4 makes it so;
 * it combines in an order that respects a non-commutative operation, so
 * every operation, user-defined ones included, runs here.  The result then
 * travels as ibmc_mcast's MPI_Bcast does (bcast_intra_ibmc_mcast.c): one
 * multicast among the node leaders, reliable under loss, and shared memory
 * inside each node.  Where the channel cannot serve the communicator that
 * broadcast runs the binomial tree on every member alike, and the bits are
 * still rank 0's.
 *
 * The reduce stage is a tree of point-to-point messages (log2 of the node
 * count deep), so the whole takes about one step more than recursive
 * doubling, with fewer messages (n - 1 and one multicast against
 * n log2 n).  It is the stage to replace: partial results written into
 * boards up a wide tree, several at once into one process, would take
 * fewer steps than log2 n; that is not built.  Above
 * MPIR_CVAR_IBMC_ALLREDUCE_MAX_BYTES it runs MPICH's own selection: there
 * the root's reduction of the whole vector, and its broadcast, weigh more
 * than the reduce-scatter and allgather that MPICH picks for large data. */

#include "mpiimpl.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_IBMC_ALLREDUCE_MAX_BYTES
      category    : CH4_IBMC
      type        : int
      default     : 4096
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Largest MPI_Allreduce, in bytes (count times the datatype's size),
        that MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=ibmc_mcast runs as a reduce
        to rank 0 and a multicast of the result; larger ones run MPICH's own
        selection (reduce-scatter and allgather for large data).  The
        default keeps the result within one
        multicast fragment on an InfiniBand 4096-byte MTU.  0: no limit.
        Must be the same at every process; MPI_Init fails on a negative
        value.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

int MPIR_Allreduce_intra_ibmc_mcast(const void *sendbuf, void *recvbuf, MPI_Aint count,
                                    MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm_ptr,
                                    MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Aint type_size;

    MPIR_Datatype_get_size_macro(datatype, type_size);
    if (MPIR_CVAR_IBMC_ALLREDUCE_MAX_BYTES > 0 &&
        count * type_size > (MPI_Aint) MPIR_CVAR_IBMC_ALLREDUCE_MAX_BYTES)
        return MPIR_Allreduce_allcomm_auto(sendbuf, recvbuf, count, datatype, op, comm_ptr,
                                           errflag);
    if (comm_ptr->local_size == 1) {
        if (sendbuf != MPI_IN_PLACE)
            mpi_errno = MPIR_Localcopy(sendbuf, count, datatype, recvbuf, count, datatype);
        return mpi_errno;
    }

    /* rank 0 combines; the others' recvbuf receives the result below, so it
     * may serve as their input when the user gave it in place */
    if (comm_ptr->rank == 0)
        mpi_errno = MPIR_Reduce(sendbuf, recvbuf, count, datatype, op, 0, comm_ptr, errflag);
    else
        mpi_errno = MPIR_Reduce(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, NULL, count,
                                datatype, op, 0, comm_ptr, errflag);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIR_Bcast_intra_ibmc_mcast(recvbuf, count, datatype, 0, comm_ptr, errflag);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
