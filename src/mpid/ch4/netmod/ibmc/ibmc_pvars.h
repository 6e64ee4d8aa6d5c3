/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Rank-wide traffic counters, exported as MPI_T performance variables
 * (class COUNTER, continuous, read-only, MPI_UNSIGNED_LONG_LONG) so that a
 * tool or a test can tell which path a message took: eager packets, or a
 * rendezvous pulled with RDMA READ.  The names are the field names with an
 * "ibmc_" prefix (the multicast channel's: "ibmc_mcast_"); ibmc_pvars.c
 * describes each one. */

#ifndef IBMC_PVARS_H_INCLUDED
#define IBMC_PVARS_H_INCLUDED

#include "mcast/ibmc_mcast_engine.h"

typedef struct {
    unsigned long long eager_pkts_sent; /* packets carrying an active message (first or continuation) */
    unsigned long long eager_bytes_sent;        /* their bytes, headers included */
    unsigned long long compact_send_hdrs;       /* of them, MPIDIG_SEND headers sent compacted */
    unsigned long long lightweight_sends;       /* of those, sent without an MPIDIG request */
    unsigned long long eager_pkts_recvd;
    unsigned long long eager_bytes_recvd;
    unsigned long long ctrl_pkts_sent;  /* handshake, rendezvous request/finish and credit packets */
    unsigned long long rndv_sends;      /* messages this rank offered by rendezvous */
    unsigned long long rndv_recvs;      /* messages this rank pulled by rendezvous */
    unsigned long long rndv_packed_recvs;       /* of those, received through a bounce buffer */
    unsigned long long rndv_windows;    /* memory windows bound for rendezvous sends */
    unsigned long long rdma_reads;      /* RDMA READ work requests posted */
    unsigned long long rdma_read_bytes; /* bytes they moved */
    unsigned long long rc_connections;  /* RC queue pairs created (on first use of a peer) */
    unsigned long long credit_stalls;   /* sends that waited for a peer's eager credits */
    unsigned long long credit_lends;    /* eager windows this process grew for streaming peers */
    unsigned long long cm_dropped;      /* connection datagrams refused (ibmc_cm_msg.h) */
    /* the multicast channel, counted by its engine and its verbs side */
    ibmc_mcast_stats_t mcast;
    /* node segments and the ibmc_node_rd allgather (ibmc_node_allgather.c) */
    unsigned long long node_rd_allgathers;      /* calls that used the segments */
    unsigned long long node_rd_writes;  /* RDMA writes of data into other nodes' segments */
    unsigned long long node_rd_write_bytes;
    unsigned long long node_rd_flag_writes;     /* RDMA writes of arrival flags */
    unsigned long long node_rd_copies;  /* copies into and out of the own node's segment */
    unsigned long long node_rd_mcast_bcasts;    /* nodes' blocks a leader moved by multicast */
    unsigned long long node_rd_fallbacks;       /* calls that ran a stock algorithm instead */
} MPIDI_IBMC_pvars_t;

/* Static storage, not part of the netmod state: MPI_T reads a counter through
 * the address given at registration, and a tool may read it after
 * MPI_Finalize has freed the state. */
extern MPIDI_IBMC_pvars_t MPIDI_IBMC_pvars;

void MPIDI_IBMC_pvars_register(void);

#endif /* IBMC_PVARS_H_INCLUDED */
