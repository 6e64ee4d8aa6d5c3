/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Rank-wide traffic counters, exported as MPI_T performance variables
 * (class COUNTER, continuous, read-only, MPI_UNSIGNED_LONG_LONG) so that a
 * tool or a test can tell which path a message took: eager packets, or a
 * rendezvous pulled with RDMA READ.  The names are the field names with an
 * "ibmc_" prefix; ibmc_pvars.c describes each one. */

#ifndef IBMC_PVARS_H_INCLUDED
#define IBMC_PVARS_H_INCLUDED

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
    /* the multicast channel (ibmc_mcast.c) */
    unsigned long long mcast_bcasts;    /* broadcasts that went over multicast, as root or not */
    unsigned long long mcast_pkts_sent; /* multicast sends posted (one per fragment) */
    unsigned long long mcast_bytes_sent;
    unsigned long long mcast_pkts_recvd;        /* multicast packets received */
    unsigned long long mcast_acks_sent; /* over RC or as RDMA writes */
    unsigned long long mcast_acks_written;      /* ... of them as RDMA writes into a board */
    unsigned long long mcast_acks_read; /* ACKs this process found on its boards */
    unsigned long long mcast_acks_foreign;      /* board words of another epoch, asked again */
    unsigned long long mcast_naks_sent; /* NAK messages sent (each names a range) */
    unsigned long long mcast_retransmits;       /* packets sent again over RC for NAKs */
    unsigned long long mcast_ack_probes;        /* ACK requests a stuck root (or a co-root) sent over RC */
    unsigned long long mcast_relays;    /* packets sent over RC to co-roots */
    unsigned long long mcast_coroot_acks;       /* ACKs sent as a co-root, for a subgroup */
    unsigned long long mcast_duplicates;        /* packets dropped as already delivered or held */
    unsigned long long mcast_dropped;   /* foreign, stale, malformed, wrong-source, out-of-window */
    unsigned long long mcast_faults;    /* packets the fault injector dropped */
    unsigned long long mcast_recoveries;        /* received broadcasts that needed a NAK */
    unsigned long long mcast_recovery_us;       /* their time from first NAK to complete, summed */
    unsigned long long mcast_recovery_worst_us; /* and the longest */
    unsigned long long mcast_fallbacks; /* broadcasts that ran a stock algorithm instead */
    unsigned long long mcast_groups;    /* multicast groups this process is in now */
    unsigned long long mcast_boards;    /* ACK boards it has registered, in use or free */
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
