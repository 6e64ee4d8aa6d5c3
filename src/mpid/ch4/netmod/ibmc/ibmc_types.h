/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The netmod's private state.  Only ibmc's own sources include this; each
 * layer's functions are declared in its own header (doc/design.md, "Layer
 * map"). */

#ifndef IBMC_TYPES_H_INCLUDED
#define IBMC_TYPES_H_INCLUDED

#include "ibmc_impl.h"
#include "ibmc_verbs.h"
#include "ibmc_err.h"
#include "ibmc_wire.h"
#include "ibmc_cm_fsm.h"
#include "ibmc_frag.h"
#include "ibmc_pkt.h"
#include "ibmc_rcache.h"
#include "ibmc_credit.h"
#include "ibmc_finbar.h"
#include "ibmc_pvars.h"
#include "ibmc_cookie.h"
#include "ibmc_am_check.h"
#include "ibmc_heapwatch.h"
#include "ibmc_wr.h"

#define IBMC_CM_MSG_BYTES 64    /* UD buffer payload; a CM message is smaller */

/* A registration of user memory for the rendezvous protocol: from the
 * registration cache (entry set) or, for memory the cache cannot track, made
 * for this one transfer (entry NULL, mr deregistered on release). */
typedef struct {
    struct ibv_mr *mr;
    ibmc_rcache_entry_t *entry;
} MPIDI_IBMC_reg_t;

/* An active message waiting to be (fully) packetised.  The AM header, and
 * for control packets the extra bytes after it, are copied because the
 * caller's copy may live on its stack. */
struct MPIDI_IBMC_state;
struct MPIDI_IBMC_conn;
/* Work an operation's owner posts on the queue pair ahead of the
 * operation's first packet (a rendezvous send binds the window the packet
 * names).  It sets *posted to 0 when it must wait for resources: the
 * operation waits, and the connection stays busy. */
typedef int (*MPIDI_IBMC_pre_post_fn) (struct MPIDI_IBMC_state * st,
                                        struct MPIDI_IBMC_conn * conn, void *arg, int *posted);

typedef struct MPIDI_IBMC_sendop {
    struct MPIDI_IBMC_sendop *next;
    MPIR_Request *sreq;         /* completed through origin_cbs once all data is copied out */
    int pkt_type;               /* IBMC_PKT_AM, or IBMC_PKT_RNDV/_FIN with no data */
    int pkt_flags;              /* IBMC_PKT_F_SEND16 if am_hdr[] holds the compact form */
    int has_msg_sz;             /* the first packet does not end the message: say its size */
    MPI_Aint extra_sz;          /* bytes after the AM header in am_hdr[] */
    MPI_Aint rndv_data_sz;      /* IBMC_PKT_RNDV: data bytes the receiver will read */
    const void *data;
    MPI_Aint count;
    MPI_Datatype datatype;
    const char *contig;         /* contiguous host data to memcpy from, else NULL (typerep) */
    ibmc_frag_tx_t tx;
    int handler_id;
    int src_vci;
    int dst_vci;
    MPIDI_IBMC_pre_post_fn pre_post;    /* or NULL */
    void *pre_post_arg;
    MPI_Aint am_hdr_sz;         /* as sent: the compact form's size with IBMC_PKT_F_SEND16 */
    char am_hdr[];
} MPIDI_IBMC_sendop_t;

/* rendezvous' state (ibmc_rndv.c): the connection and the state hold
 * only pointers to it */
struct MPIDI_IBMC_mw;
struct MPIDI_IBMC_rndv_send;
struct MPIDI_IBMC_rdma_read;

/* One peer: its RC queue pair and everything in flight to or from it. */
typedef struct MPIDI_IBMC_conn {
    int rank;                   /* in MPI_COMM_WORLD */
    ibmc_cm_t cm;
    struct ibv_qp *qp;
    uint32_t psn, peer_psn;     /* first packet sequence numbers of our QP and the peer's */
    uint64_t nonce;             /* sent in our REQ; a REP must echo it (ibmc_cm_msg.h) */
    uint64_t peer_nonce;        /* of the peer's last REQ, echoed in our REP */
    int nonce_sent;             /* a REQ went out: a REP can be an answer */
    struct ibv_ah *ah;          /* for connection datagrams */
    int sq_inflight;            /* posted sends not yet completed */
    int need_rtu;               /* the handshake's RTU still has to be posted */
    ibmc_credit_t cr;           /* eager flow control towards and from this peer */
    int credit_pending;         /* a credit packet is due but could not be posted */
    MPIDI_IBMC_sendop_t *q_head, *q_tail;
    struct MPIDI_IBMC_rdma_read *rd_head, *rd_tail;     /* reads not yet fully posted */
    struct MPIDI_IBMC_rndv_send *inv_head, *inv_tail;   /* windows to invalidate */
    struct MPIDI_IBMC_conn *next_busy;
    int on_busy_list;

    /* the message being reassembled (see ibmc_frag.h) */
    ibmc_reasm_t rx;
    int rx_handler_id, rx_src_vci, rx_dst_vci;
    MPI_Aint rx_am_hdr_sz;

    /* statistics, printed with MPIR_CVAR_IBMC_STATS */
    uint64_t tx_pkts, tx_bytes, rx_pkts, rx_bytes;
    uint64_t rndv_tx, rndv_rx, rndv_read_bytes, rndv_bounced;
    /* the packets above that only keep the connection going
     * (ibmc_pkt_is_upkeep), both ways: a connection that carried nothing
     * else is not the job's.  A peer ahead in MPI_Finalize's barrier may
     * have made it before this process reached MPI_Finalize. */
    uint64_t upkeep_pkts;
} MPIDI_IBMC_conn_t;

/* A registered send buffer; free ones form a list through next_free. */
typedef struct {
    char *buf;
    int peer;
    int next_free;
} MPIDI_IBMC_sbuf_t;

typedef struct MPIDI_IBMC_state {
    ibmc_hca_t hca;
    char hca_name[64];

    /* one registered region: [send bufs][SRQ bufs][UD recv bufs][UD send bufs] */
    char *mem;
    size_t mem_sz;
    struct ibv_mr *mr;
    MPIDI_IBMC_sbuf_t *sbufs;
    int n_sbufs;
    int sbuf_free;              /* head of the free list, -1 when empty */
    char *rbufs;                /* the base pool, in mem */
    int n_rbufs;
    /* more receive buffers, one chunk per connection beyond what the base
     * pool covers, so that every connected peer's credits are backed by
     * posted buffers (ibmc_credit.h) */
    char **rchunk_mem;
    struct ibv_mr **rchunk_mr;
    int n_rchunks, max_rchunks, rchunk_bufs;
    ibmc_credit_pool_t rpool;   /* posted buffers, and those promised to connected peers */
    char *ud_rbufs;
    int n_ud_rbufs;
    char *ud_sbufs;
    int n_ud_sbufs;
    int ud_sq_next;             /* UD send buffers are used round-robin */
    int ud_sq_inflight;
    int sq_depth;               /* per RC QP */

    int my_rank;
    int world_size;
    uint64_t job_key;
    uint32_t ud_qkey;           /* of the connection datagrams: from the job key */
    ibmc_card_t *cards;         /* every process's business card, by world rank */
    MPIDI_IBMC_conn_t *conns;   /* by world rank */
    MPIDI_IBMC_conn_t *busy_head;       /* conns with queued sends or a handshake timer */
    ibmc_cm_timing_t cm_timing;
    int yield;                  /* sched_yield() when a poll finds nothing */
    ibmc_finbar_t finbar;       /* MPI_Finalize's barrier over RC (ibmc_finalize.c) */
    uint64_t fin_mcast_dropped; /* multicast messages still queued when it ended, dropped */

    /* rendezvous (ibmc_rndv.c) and user-memory registration (ibmc_mem.c) */
    size_t max_read;            /* bytes of one RDMA READ work request */
    int reads_inflight, max_reads;      /* READ WRs posted, and the bound the CQ allows */
    ibmc_rcache_t rcache;
    int rcache_on;
    uintptr_t heap_lo, heap_hi; /* the brk heap, the memory the cache can track */
    ibmc_heapwatch_t heap_seen; /* the application's heap calls at the last lookup */
    uint64_t reg_uncached;      /* registrations made for one transfer */
    ibmc_cookie_table_t rndv_cookies;   /* what a peer's FIN may name (ibmc_cookie.h) */
    ibmc_am_rules_t am_rules;   /* what a packet may ask of MPIDIG (ibmc_am_check.h) */
    int use_mw;                 /* peers read through per-transfer memory windows */
    struct MPIDI_IBMC_mw *mw_pool;      /* unbound windows */
    int mw_ops_inflight, max_mw_ops;    /* binds and invalidations posted, and their bound */

    /* MPIR_CVAR_IBMC_FAULT_QP_ERROR (ibmc_qp_fault.c): 0, or the post that breaks a QP */
    uint64_t qp_fault_at, qp_fault_count;
    int qp_fault_kind;          /* IBMC_QP_FAULT_* */

    struct MPIDI_IBMC_mcast *mcast;     /* the multicast channel, set up on first use */
    int mcast_told_off, mcast_told_large;       /* those fallbacks' reasons were printed */

    /* node-shared segments (ibmc_nodeseg.c), one per communicator that used them */
    struct MPIDI_IBMC_nodeseg *nodesegs;
    unsigned nodeseg_names;     /* segments this process has created: part of their names */
    int nodeseg_told_off, nodeseg_told_init;
    int nodeseg_swept;          /* stale segment names of dead processes removed */
    /* what partner nodes read to check that this process is alive: it lives
     * until the protection domain does, so a check can never hit a freed
     * segment (ibmc_node_allgather.c) */
    uint64_t probe_word;
    struct ibv_mr *probe_mr;
} MPIDI_IBMC_state_t;

#define MPIDI_IBMC_STATE() (MPIDI_IBMC_global.state)

/* Receive buffer idx: the base pool, then the chunks. */
static inline char *MPIDI_IBMC_rbuf_addr(MPIDI_IBMC_state_t * st, int idx)
{
    size_t psz = (size_t) MPIDI_IBMC_global.packet_size;
    if (idx < st->n_rbufs)
        return st->rbufs + (size_t) idx * psz;
    idx -= st->n_rbufs;
    return st->rchunk_mem[idx / st->rchunk_bufs] + (size_t) (idx % st->rchunk_bufs) * psz;
}

static inline uint32_t MPIDI_IBMC_rbuf_lkey(MPIDI_IBMC_state_t * st, int idx)
{
    if (idx < st->n_rbufs)
        return st->mr->lkey;
    return st->rchunk_mr[(idx - st->n_rbufs) / st->rchunk_bufs]->lkey;
}

/* Seconds on MPL's clock, for the handshake timers. */
static inline double MPIDI_IBMC_now(void)
{
    MPL_time_t t;
    double d;
    MPL_wtime(&t);
    MPL_wtime_todouble(&t, &d);
    return d;
}

#endif /* IBMC_TYPES_H_INCLUDED */
