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
 * Up to 128 bytes of contiguous data with a commutative operation (8 B is
 * the common case: a residual, a time step), the reduce runs in the
 * netmod (MPIDI_IBMC_mcast_allreduce): each node leader writes its
 * subtree's partial result by RDMA into its parent's registered board, up
 * a tree of MPIR_CVAR_IBMC_ALLREDUCE_FANOUT children a parent, so that
 * 1,024 node leaders reduce in two steps, each parent polls its children's
 * slots and receives no message, and rank 0's work does not grow with the
 * node count; rank 0 then multicasts the result.
 *
 * Otherwise the reduce goes up a k-nomial tree (ibmc_knomial.h) of radix
 * MPIR_CVAR_IBMC_ALLREDUCE_TREE_KVAL: each parent posts the receives of
 * all its children at once and combines their results in rank order, so
 * a non-commutative operation, user-defined ones included, keeps its
 * order.  Its depth is log_k of the process count against log2 for
 * recursive doubling or a binomial reduce; a parent pays one more received
 * message per child instead, hence a small radix (bench/sim/
 * project-allreduce.sh).  With a commutative operation on a communicator
 * of several nodes, each node first reduces to its leader (MPICH's
 * MPIR_Reduce, through shared memory) and the tree spans the leaders; CH4
 * also reaches this algorithm with the leaders' communicator directly,
 * after its own node-local reduce.  The result then travels as
 * ibmc_mcast's MPI_Bcast does (bcast_intra_ibmc_mcast.c): one multicast
 * among the node leaders, reliable under loss, and shared memory inside
 * each node.  Where the channel cannot serve the communicator that
 * broadcast runs the binomial tree on every member alike, and the bits are
 * still rank 0's.
 *
 * Above MPIR_CVAR_IBMC_ALLREDUCE_MAX_BYTES it runs MPICH's own selection:
 * there one process's reduction of the whole vector, and its broadcast,
 * weigh more than the reduce-scatter and allgather that MPICH picks for
 * large data. */

#include "mpiimpl.h"
#include "ibmc_knomial.h"
#ifdef HAVE_CH4_NETMOD_IBMC
#include "../../../mpid/ch4/netmod/ibmc/ibmc_coll.h"
#endif

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

    - name        : MPIR_CVAR_IBMC_ALLREDUCE_FANOUT
      category    : CH4_IBMC
      type        : int
      default     : 32
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Children per parent in the tree up which
        MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=ibmc_mcast reduces an allreduce
        of at most 128 bytes of contiguous data with a commutative
        operation: each node leader writes its subtree's partial result by
        RDMA into its parent's board, which the parent polls.  A larger
        fanout makes the tree shallower (32 reaches 1,056 node leaders in
        two steps) and has each parent read and combine more slots
        (bench/sim/project-allreduce.sh).  From 2 to 64; must be the same at
        every process; MPI_Init fails on another value.

    - name        : MPIR_CVAR_IBMC_ALLREDUCE_TREE_KVAL
      category    : CH4_IBMC
      type        : int
      default     : 4
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Radix of the k-nomial tree up which
        MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=ibmc_mcast reduces what the
        board tree (MPIR_CVAR_IBMC_ALLREDUCE_FANOUT) does not take: more
        than 128 bytes, non-contiguous data or a non-commutative operation
        (at least 2;
        2 is a binomial tree).  A larger radix makes the tree shallower but
        has each parent receive more messages one after another; in the
        simulator 4 was the fastest radix for 8 B at 64 and 1024 nodes and
        within 3 % of 8 at 256 (bench/sim/project-allreduce.sh).  Must be
        the same at every process; MPI_Init fails on a value below 2.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* The reduce up the k-nomial tree of comm to its rank 0, whose recvbuf gets
 * the result; in is this process's contribution (already in recvbuf at
 * rank 0 when in_place). */
static int reduce_knomial(const void *in, int in_place, void *recvbuf, MPI_Aint count,
                          MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm,
                          MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;
    int rank = comm->rank, n = comm->local_size, k = MPIR_CVAR_IBMC_ALLREDUCE_TREE_KVAL;
    MPI_Aint true_lb, true_extent, extent;
    MPIR_CHKLMEM_DECL(3);

    int maxc = ibmc_knomial_max_children(n, k);
    int *children;
    MPIR_CHKLMEM_MALLOC(children, int *, sizeof(int) * (maxc > 0 ? maxc : 1), mpi_errno,
                        "children", MPL_MEM_COLL);
    int nc = ibmc_knomial_children(rank, n, k, children, maxc);
    int parent = ibmc_knomial_parent(rank, n, k);

    if (nc == 0) {
        /* a leaf: its contribution goes up as it is */
        mpi_errno = MPIC_Send(in, count, datatype, parent, MPIR_REDUCE_TAG, comm, errflag);
        MPIR_ERR_CHECK(mpi_errno);
        goto fn_exit;
    }

    /* a buffer per child and one for the running result, each shifted so
     * that the datatype's true lower bound lands at its start */
    MPIR_Type_get_true_extent_impl(datatype, &true_lb, &true_extent);
    MPIR_Datatype_get_extent_macro(datatype, extent);
    MPI_Aint slot = count * MPL_MAX(extent, true_extent);
    char *mem;
    MPIR_Request **reqs;
    MPIR_CHKLMEM_MALLOC(mem, char *, slot * (nc + 1), mpi_errno, "child results", MPL_MEM_COLL);
    MPIR_CHKLMEM_MALLOC(reqs, MPIR_Request **, sizeof(MPIR_Request *) * nc, mpi_errno,
                        "child requests", MPL_MEM_COLL);
    for (int i = 0; i < nc; i++) {
        mpi_errno = MPIC_Irecv(mem + (i + 1) * slot - true_lb, count, datatype, children[i],
                               MPIR_REDUCE_TAG, comm, &reqs[i]);
        MPIR_ERR_CHECK(mpi_errno);
    }
    /* the running result starts as this process's own value: in recvbuf
     * at rank 0, in the spare slot elsewhere */
    void *acc = rank == 0 ? recvbuf : mem - true_lb;
    if (rank != 0 || !in_place) {
        mpi_errno = MPIR_Localcopy(in, count, datatype, acc, count, datatype);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = MPIC_Waitall(nc, reqs, MPI_STATUSES_IGNORE, errflag);
    MPIR_ERR_CHECK(mpi_errno);
    /* acc = acc op child, in rank order: the operation writes into its
     * second argument, so the child's buffer takes the result and becomes
     * the running one */
    for (int i = 0; i < nc; i++) {
        void *child = mem + (i + 1) * slot - true_lb;
        mpi_errno = MPIR_Reduce_local(acc, child, count, datatype, op);
        MPIR_ERR_CHECK(mpi_errno);
        acc = child;
    }
    if (rank == 0) {
        mpi_errno = MPIR_Localcopy(acc, count, datatype, recvbuf, count, datatype);
        MPIR_ERR_CHECK(mpi_errno);
    } else {
        mpi_errno = MPIC_Send(acc, count, datatype, parent, MPIR_REDUCE_TAG, comm, errflag);
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    MPIR_CHKLMEM_FREEALL();
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

#ifdef HAVE_CH4_NETMOD_IBMC
/* The board tree reduces in place: this process's contribution into
 * recvbuf, if it is not there yet. */
static int into_recvbuf(const void **in, int *in_place, void *recvbuf, MPI_Aint count,
                        MPI_Datatype datatype)
{
    if (*in_place)
        return MPI_SUCCESS;
    int mpi_errno = MPIR_Localcopy(*in, count, datatype, recvbuf, count, datatype);
    *in = recvbuf;
    *in_place = 1;
    return mpi_errno;
}

/* MPIR_Reduce_local for the netmod's reduce (MPIDI_IBMC_combine_fn). */
typedef struct {
    MPI_Aint count;
    MPI_Datatype datatype;
    MPI_Op op;
    int mpi_errno;
} combine_ctx_t;

static void combine(void *ctx, const void *in, void *inout, size_t len)
{
    combine_ctx_t *x = ctx;
    (void) len;
    int mpi_errno = MPIR_Reduce_local(in, inout, x->count, x->datatype, x->op);
    if (mpi_errno && !x->mpi_errno)
        x->mpi_errno = mpi_errno;
}

/* The reduce and the result's multicast among comm's members, one per
 * node, over the board tree: recvbuf holds this member's contribution.
 * *used = 0 when the data (*refused = 0) or the channel (*refused = 1,
 * counted as a fallback) does not allow it, the same at every member;
 * recvbuf is then untouched. */
static int allreduce_boards(void *recvbuf, MPI_Aint count, MPI_Datatype datatype, MPI_Op op,
                            MPIR_Comm * comm, int *used, int *refused)
{
    int is_contig, mpi_errno;
    MPI_Aint type_size, true_lb, true_extent;
    *used = 0;
    *refused = 0;
    MPIR_Datatype_get_size_macro(datatype, type_size);
    MPIR_Datatype_is_contig(datatype, &is_contig);
    MPI_Aint nbytes = count * type_size;
    MPIR_Type_get_true_extent_impl(datatype, &true_lb, &true_extent);
    /* the board's slots hold the bytes only: the operation is handed their
     * addresses as buffers, which a datatype whose data starts elsewhere
     * than at its origin would misread */
    if (!is_contig || true_lb != 0 || nbytes <= 0 || nbytes > MPIDI_IBMC_MCAST_REDUCE_MAX_BYTES ||
        !MPIR_Op_is_commutative(op))
        return MPI_SUCCESS;
    combine_ctx_t x = {.count = count,.datatype = datatype,.op = op,.mpi_errno = MPI_SUCCESS };
    mpi_errno = MPIDI_IBMC_mcast_allreduce(recvbuf, nbytes, comm,
                                           MPIR_CVAR_IBMC_ALLREDUCE_FANOUT, combine, &x, used);
    *refused = !*used;
    return mpi_errno ? mpi_errno : x.mpi_errno;
}
#endif

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

    int in_place = sendbuf == MPI_IN_PLACE;
    const void *in = in_place ? recvbuf : sendbuf;
    /* the channel refused the board tree: the result's broadcast runs
     * binomial among the leaders at once, counted as one fallback */
    int refused = 0;
    MPIR_Comm *leaders = comm_ptr;
    if (MPIR_Comm_is_parent_comm(comm_ptr) && MPIR_Op_is_commutative(op)) {
        /* each node to its leader (rank 0 of node_comm, the lowest rank
         * there, so rank 0's node leader is rank 0), then the leaders */
        if (comm_ptr->node_comm) {
            if (comm_ptr->node_comm->rank == 0)
                mpi_errno = MPIR_Reduce(in_place ? MPI_IN_PLACE : sendbuf, recvbuf, count,
                                        datatype, op, 0, comm_ptr->node_comm, errflag);
            else
                mpi_errno = MPIR_Reduce(in, NULL, count, datatype, op, 0, comm_ptr->node_comm,
                                        errflag);
            MPIR_ERR_CHECK(mpi_errno);
            in = recvbuf;
            in_place = 1;
        }
        if (comm_ptr->node_roots_comm) {
#ifdef HAVE_CH4_NETMOD_IBMC
            int used;
            mpi_errno = into_recvbuf(&in, &in_place, recvbuf, count, datatype);
            MPIR_ERR_CHECK(mpi_errno);
            leaders = comm_ptr->node_roots_comm;
            mpi_errno = allreduce_boards(recvbuf, count, datatype, op, leaders, &used, &refused);
            MPIR_ERR_CHECK(mpi_errno);
            if (used) {
                /* the leaders have the result: each gives it to its node */
                if (comm_ptr->node_comm) {
                    mpi_errno = MPIR_Bcast(recvbuf, count, datatype, 0, comm_ptr->node_comm,
                                           errflag);
                    MPIR_ERR_CHECK(mpi_errno);
                }
                goto fn_exit;
            }
#endif
            mpi_errno = reduce_knomial(in, in_place, recvbuf, count, datatype, op,
                                       comm_ptr->node_roots_comm, errflag);
            MPIR_ERR_CHECK(mpi_errno);
        }
    } else {
#ifdef HAVE_CH4_NETMOD_IBMC
        int used;
        mpi_errno = into_recvbuf(&in, &in_place, recvbuf, count, datatype);
        MPIR_ERR_CHECK(mpi_errno);
        mpi_errno = allreduce_boards(recvbuf, count, datatype, op, comm_ptr, &used, &refused);
        MPIR_ERR_CHECK(mpi_errno);
        if (used)
            goto fn_exit;
#endif
        mpi_errno = reduce_knomial(in, in_place, recvbuf, count, datatype, op, comm_ptr, errflag);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (refused) {
        mpi_errno = MPIR_Bcast_intra_binomial(recvbuf, count, datatype, 0, leaders, errflag);
        MPIR_ERR_CHECK(mpi_errno);
        if (leaders != comm_ptr && comm_ptr->node_comm) {
            mpi_errno = MPIR_Bcast(recvbuf, count, datatype, 0, comm_ptr->node_comm, errflag);
            MPIR_ERR_CHECK(mpi_errno);
        }
    } else {
        /* the other processes of a node only take part in its MPIR_Bcast,
         * whichever way their leader went */
        mpi_errno = MPIR_Bcast_intra_ibmc_mcast(recvbuf, count, datatype, 0, comm_ptr, errflag);
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
