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

/* The barrier of MPIR_CVAR_BARRIER_INTRA_ALGORITHM=ibmc_mcast among comm's
 * members (one per node), over its channel, set up on first use: every
 * member's arrival written up the tree of `fanout` children a parent
 * (mcast/ibmc_mcast_arrive.h), then rank 0's one-byte multicast release.
 * *used = 0, the same at every member, when the channel cannot serve comm
 * (counted in ibmc_mcast_fallbacks): the caller then runs a stock barrier. */
int MPIDI_IBMC_mcast_barrier(MPIR_Comm * comm, int fanout, int *used);

/* The largest MPI_Allreduce, in bytes, that MPIDI_IBMC_mcast_allreduce
 * takes: one slot of a parent's board per child. */
#define MPIDI_IBMC_MCAST_REDUCE_MAX_BYTES 128

/* inout = in (op) inout over len bytes. */
typedef void (*MPIDI_IBMC_combine_fn)(void *ctx, const void *in, void *inout, size_t len);

/* The reduce of a small MPI_Allreduce among comm's members (one per node)
 * over its channel, set up on first use: buf's len bytes (1 ..
 * MPIDI_IBMC_MCAST_REDUCE_MAX_BYTES, contiguous) are this member's
 * contribution; each member's subtree's partial result is written by
 * RDMA into its parent's board up the tree of `fanout` children a parent
 * (2 .. 64; mcast/ibmc_mcast_arrive.h), combined there with `combine`,
 * which must be commutative; then rank 0 multicasts the result, which
 * every member finds in buf.  *used = 0, the same at every member, when
 * the channel cannot serve comm (counted in ibmc_mcast_fallbacks): buf is
 * untouched and the caller runs another algorithm. */
int MPIDI_IBMC_mcast_allreduce(void *buf, MPI_Aint len, MPIR_Comm * comm, int fanout,
                               MPIDI_IBMC_combine_fn combine, void *ctx, int *used);

/* A nonblocking or persistent broadcast's state inside the netmod, in
 * memory the caller's schedule owns. */
typedef struct {
    uint64_t mem[8];
} MPIDI_IBMC_mcast_req_t;

/* MPI_Ibcast and MPI_Bcast_init over the channel.  _usable is collective
 * and made once per schedule: whether broadcasts of len bytes (contiguous)
 * on comm go over its channel, which it sets up on first use (a blocking
 * step, as for MPI_Bcast); *usable = 0 when they cannot (counted in
 * ibmc_mcast_fallbacks, printed with MPIR_CVAR_IBMC_STATS), the same at
 * every member.  Then, as often as the schedule runs, _post queues the
 * broadcast behind every broadcast posted before it on comm, blocking or
 * not, and the progress engine runs it; _test says when it is done (an
 * error when the root's message had another length).  _post must come when
 * the application calls (the order of a communicator's broadcasts must be
 * the same everywhere); if the data is not in buf yet, post with ready = 0
 * and say _ready when it is. */
int MPIDI_IBMC_mcast_ibcast_usable(MPI_Aint len, MPIR_Comm * comm, int *usable);
int MPIDI_IBMC_mcast_ibcast_post(MPIDI_IBMC_mcast_req_t * req, void *buf, MPI_Aint len,
                                 int root, MPIR_Comm * comm, int ready, void *place);

/* A persistent broadcast's receiver (MPI_Bcast_init, once, after _usable
 * said yes): *place is the netmod's in-place receiver for len bytes at buf
 * on comm's channel, handed to every _post, or NULL (the root, a channel
 * not in use, MPIR_CVAR_IBMC_MCAST_RECV_IN_PLACE off, or a buffer the HCA
 * cannot register: counted in ibmc_mcast_place_refused, printed once with
 * MPIR_CVAR_IBMC_STATS), in which case the broadcasts are received by
 * copies.  _place_free releases it with the request (NULL: nothing). */
int MPIDI_IBMC_mcast_ibcast_place(void *buf, MPI_Aint len, int root, MPIR_Comm * comm,
                                  void **place);
void MPIDI_IBMC_mcast_ibcast_place_free(void *place);
void MPIDI_IBMC_mcast_ibcast_ready(MPIDI_IBMC_mcast_req_t * req);
int MPIDI_IBMC_mcast_ibcast_test(MPIDI_IBMC_mcast_req_t * req, int root, MPI_Aint len,
                                 int *done);

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
