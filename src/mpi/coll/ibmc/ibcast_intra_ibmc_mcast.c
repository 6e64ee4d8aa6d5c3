/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* MPI_Ibcast and MPI_Bcast_init over InfiniBand/RoCE hardware multicast
 * (MPIR_CVAR_IBCAST_INTRA_ALGORITHM=ibmc_mcast), as a schedule of MPICH's
 * generic transport.
 *
 * The same three steps as the blocking algorithm (bcast_intra_ibmc_mcast.c),
 * each behind a fence: the root's data to its node's leader, the leaders'
 * broadcast over the channel, and each leader's tree inside its node.  The
 * middle step is one vertex of the schedule: issuing it posts the broadcast
 * to the channel (ibmc_coll.h), behind the communicator's earlier ones, and
 * the netmod's progress engine runs it; the schedule only asks whether it
 * is done.  So no call waits, and the broadcast moves while the application
 * computes, as far as the application lets progress run.
 *
 * Whether the channel can take the leaders' broadcasts is decided when the
 * schedule is made (for MPI_Bcast_init, once for every MPI_Start); the
 * first time on a communicator this sets the channel up, a step that waits
 * for every leader, as the blocking call's first broadcast does.  Where it
 * cannot (see ibmc_coll.h), the leaders run MPICH's tsp_tree among
 * themselves instead, every leader alike.
 *
 * The channel moves bytes: a non-contiguous datatype is packed at the root
 * into the schedule's memory and unpacked everywhere else, as the blocking
 * algorithm does, and the three steps move the packed bytes. */

#include "mpiimpl.h"
#ifdef HAVE_CH4_NETMOD_IBMC
#include "../../../mpid/ch4/netmod/ibmc/ibmc_coll.h"
/* whether a schedule is persistent (MPI_Bcast_init), which no transport
 * call says: such a schedule's receivers get their buffer registered once */
#include "../transports/gentran/gentran_types.h"
#endif

/* the stock steps: tsp_tree, under its CVARs */
static int sched_tree(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                      MPIR_Comm * comm, MPIR_TSP_sched_t sched)
{
    return MPIR_TSP_Ibcast_sched_intra_tree(buffer, count, datatype, root, comm,
                                            MPIR_Ibcast_tree_type, MPIR_CVAR_IBCAST_TREE_KVAL,
                                            MPIR_CVAR_IBCAST_TREE_PIPELINE_CHUNK_SIZE, sched);
}

#ifdef HAVE_CH4_NETMOD_IBMC
/* The channel's vertices' state, in the schedule's memory. */
typedef struct {
    MPIR_Comm *comm;
    void *buf;
    MPI_Aint len;
    int root;
    int ready;                  /* the data is in buf when the schedule starts */
    void *place;                /* a persistent schedule's in-place receiver, or NULL */
    MPIDI_IBMC_mcast_req_t req;
} mcast_vtx_t;

/* Its place in the communicator's order of broadcasts, taken when the
 * schedule starts (in MPI_Ibcast, or MPI_Start), which is when the
 * application calls. */
static int mcast_post(void *data, int *done)
{
    mcast_vtx_t *v = data;
    int mpi_errno = MPIDI_IBMC_mcast_ibcast_post(&v->req, v->buf, v->len, v->root, v->comm,
                                                 v->ready, v->place);
    if (mpi_errno || !v->ready) {
        /* the data comes first: mcast_go says when */
        *done = 1;
        return mpi_errno;
    }
    return MPIDI_IBMC_mcast_ibcast_test(&v->req, v->root, v->len, done);
}

/* The root's data is at this node's leader: the broadcast may go. */
static int mcast_go(void *data, int *done)
{
    mcast_vtx_t *v = data;
    MPIDI_IBMC_mcast_ibcast_ready(&v->req);
    return MPIDI_IBMC_mcast_ibcast_test(&v->req, v->root, v->len, done);
}

static int mcast_complete(void *data, int *is_completed)
{
    mcast_vtx_t *v = data;
    return MPIDI_IBMC_mcast_ibcast_test(&v->req, v->root, v->len, is_completed);
}

/* The schedule is freed: with MPI_Request_free for a persistent one. */
static int mcast_free(void *data)
{
    mcast_vtx_t *v = data;
    MPIDI_IBMC_mcast_ibcast_place_free(v->place);
    v->place = NULL;
    return MPI_SUCCESS;
}

/* The broadcast among processes that each have a node to themselves: the
 * channel's vertices, or the stock tree.  ready = 0: the data comes to buf
 * by vertices scheduled before, and *go_vtx (-1 if none) is the vertex that
 * lets the broadcast go, which the caller puts behind a fence. */
static int sched_flat(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                      MPIR_Comm * comm, MPIR_TSP_sched_t sched, int ready, mcast_vtx_t ** go)
{
    int mpi_errno = MPI_SUCCESS, usable = 0, vtx;
    MPI_Aint type_size, true_lb, true_extent;
    *go = NULL;
    MPIR_Datatype_get_size_macro(datatype, type_size);
    /* every member has the same type signature, so the same answer */
    mpi_errno = MPIDI_IBMC_mcast_ibcast_usable(type_size * count, comm, &usable);
    MPIR_ERR_CHECK(mpi_errno);
    if (!usable)
        return ready ? sched_tree(buffer, count, datatype, root, comm, sched) : MPI_SUCCESS;
    MPIR_Type_get_true_extent_impl(datatype, &true_lb, &true_extent);
    mcast_vtx_t *v = MPIR_TSP_sched_malloc(sizeof(*v), sched);
    MPIR_ERR_CHKANDJUMP(!v, mpi_errno, MPI_ERR_OTHER, "**nomem");
    v->comm = comm;
    v->buf = (char *) buffer + true_lb;
    v->len = type_size * count;
    v->root = root;
    v->ready = ready;
    v->place = NULL;
    if (((MPII_Genutil_sched_t *) sched)->is_persistent) {
        mpi_errno = MPIDI_IBMC_mcast_ibcast_place(v->buf, v->len, root, comm, &v->place);
        MPIR_ERR_CHECK(mpi_errno);
    }
    /* no dependence but a non-contiguous root's pack, done when issued: so
     * issued as the schedule starts */
    int type = MPIR_TSP_sched_new_type(sched, mcast_post, mcast_complete, mcast_free);
    mpi_errno = MPIR_TSP_sched_generic(type, v, sched, 0, NULL, &vtx);
    if (mpi_errno)
        mcast_free(v);  /* no vertex: the schedule's free would not release it */
    MPIR_ERR_CHECK(mpi_errno);
    if (!ready)
        *go = v;
  fn_fail:
    return mpi_errno;
}

/* The three steps, on contiguous data. */
static int sched_steps(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                       MPIR_Comm * comm, MPIR_TSP_sched_t sched)
{
    int mpi_errno = MPI_SUCCESS, tag, vtx;
    mcast_vtx_t *go = NULL;
    if (!MPIR_Comm_is_parent_comm(comm))
        return sched_flat(buffer, count, datatype, root, comm, sched, 1, &go);

    /* the leaders' broadcast takes its place first, then the root's node
     * leader gets the data */
    int leaders_usable = 0;
    if (comm->node_roots_comm) {
        mpi_errno = sched_flat(buffer, count, datatype, MPIR_Get_internode_rank(comm, root),
                               comm->node_roots_comm, sched, 0, &go);
        MPIR_ERR_CHECK(mpi_errno);
        leaders_usable = go != NULL;
    }
    int intra_root = MPIR_Get_intranode_rank(comm, root);
    if (comm->node_comm) {
        mpi_errno = MPIR_Sched_next_tag(comm->node_comm, &tag);
        MPIR_ERR_CHECK(mpi_errno);
        if (intra_root > 0 && root == comm->rank) {
            mpi_errno = MPIR_TSP_sched_isend(buffer, count, datatype, 0, tag, comm->node_comm,
                                             sched, 0, NULL, &vtx);
            MPIR_ERR_CHECK(mpi_errno);
        } else if (intra_root > 0 && comm->node_comm->rank == 0) {
            mpi_errno = MPIR_TSP_sched_irecv(buffer, count, datatype, intra_root, tag,
                                             comm->node_comm, sched, 0, NULL, &vtx);
            MPIR_ERR_CHECK(mpi_errno);
        }
    }
    mpi_errno = MPIR_TSP_sched_fence(sched);
    MPIR_ERR_CHECK(mpi_errno);
    if (comm->node_roots_comm) {
        if (leaders_usable) {
            int type = MPIR_TSP_sched_new_type(sched, mcast_go, mcast_complete, NULL);
            mpi_errno = MPIR_TSP_sched_generic(type, go, sched, 0, NULL, &vtx);
        } else {
            mpi_errno = sched_tree(buffer, count, datatype, MPIR_Get_internode_rank(comm, root),
                                   comm->node_roots_comm, sched);
        }
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = MPIR_TSP_sched_fence(sched);
    MPIR_ERR_CHECK(mpi_errno);
    if (comm->node_comm) {
        mpi_errno = sched_tree(buffer, count, datatype, 0, comm->node_comm, sched);
        MPIR_ERR_CHECK(mpi_errno);
    }
  fn_fail:
    return mpi_errno;
}
#endif

int MPIR_TSP_Ibcast_sched_intra_ibmc_mcast(void *buffer, MPI_Aint count, MPI_Datatype datatype,
                                           int root, MPIR_Comm * comm, MPIR_TSP_sched_t sched)
{
#ifdef HAVE_CH4_NETMOD_IBMC
    int mpi_errno = MPI_SUCCESS, is_contig, vtx;
    MPI_Aint type_size;
    MPIR_Datatype_is_contig(datatype, &is_contig);
    if (is_contig)
        return sched_steps(buffer, count, datatype, root, comm, sched);

    MPIR_Datatype_get_size_macro(datatype, type_size);
    MPI_Aint nbytes = type_size * count;
    void *packed = MPIR_TSP_sched_malloc(nbytes ? nbytes : 1, sched);
    MPIR_ERR_CHKANDJUMP(!packed, mpi_errno, MPI_ERR_OTHER, "**nomem");
    if (comm->rank == root) {
        mpi_errno = MPIR_TSP_sched_localcopy(buffer, count, datatype, packed, nbytes, MPI_BYTE,
                                             sched, 0, NULL, &vtx);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = MPIR_TSP_sched_fence(sched);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = sched_steps(packed, nbytes, MPI_BYTE, root, comm, sched);
    MPIR_ERR_CHECK(mpi_errno);
    if (comm->rank != root) {
        mpi_errno = MPIR_TSP_sched_fence(sched);
        MPIR_ERR_CHECK(mpi_errno);
        mpi_errno = MPIR_TSP_sched_localcopy(packed, nbytes, MPI_BYTE, buffer, count, datatype,
                                             sched, 0, NULL, &vtx);
        MPIR_ERR_CHECK(mpi_errno);
    }
  fn_fail:
    return mpi_errno;
#else
    return sched_tree(buffer, count, datatype, root, comm, sched);
#endif
}
