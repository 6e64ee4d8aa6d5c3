/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Per-object netmod fields that CH4 embeds in its requests, communicators,
 * windows and address-vector entries.  Everything here is included by all of
 * libmpi, so it stays small and changes rarely: the netmod's real state lives
 * in ibmc_types.h, which only the netmod's own sources include. */

#ifndef IBMC_PRE_H_INCLUDED
#define IBMC_PRE_H_INCLUDED

typedef struct {
    int dummy;
} MPIDI_IBMC_Global_t;

/* A rendezvous message on the receive side, from its IBMC_PKT_RNDV until the
 * receive is matched and the READs start (ibmc_rndv.c). */
typedef struct {
    uint64_t addr;
    uint64_t cookie;
    uint32_t rkey;
    int peer;
    MPI_Aint data_sz;
} MPIDI_IBMC_am_request_t;

typedef struct {
    int dummy;
} MPIDI_IBMC_request_t;

/* The communicator's multicast channel (MPIDI_IBMC_mcast_chan_t, ibmc_mcast.h),
 * NULL until its first multicast broadcast, and its node segments
 * (MPIDI_IBMC_nodeseg_t, ibmc_nodeseg.h), NULL until its first ibmc_node_rd
 * allgather. */
typedef struct {
    void *coll;
    void *nodeseg;
} MPIDI_IBMC_comm_t;

typedef struct {
    int dummy;
} MPIDI_IBMC_dt_t;

typedef struct {
    int dummy;
} MPIDI_IBMC_op_t;

typedef struct {
    int dummy;
} MPIDI_IBMC_win_t;

/* An address-vector entry names a peer by its rank in MPI_COMM_WORLD, which
 * indexes the netmod's connection table. */
typedef struct {
    int world_rank;
} MPIDI_IBMC_addr_t;

typedef struct {
    int dummy;
} MPIDI_IBMC_part_t;

#endif /* IBMC_PRE_H_INCLUDED */
