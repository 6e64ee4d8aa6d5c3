/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The netmod's private state.  Only ibmc's own sources include this. */

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

/* Work-request ids: the low three bits say what the completion is for, the
 * rest index the buffer it used or, for an RDMA READ, point to its
 * MPIDI_IBMC_rdma_read_t (allocations are at least 8-byte aligned). */
enum {
    IBMC_WR_RC_SEND = 0,
    IBMC_WR_RC_RECV = 1,
    IBMC_WR_UD_SEND = 2,
    IBMC_WR_UD_RECV = 3,
    IBMC_WR_RDMA_READ = 4,
    IBMC_WR_MW_BIND = 5,        /* a rendezvous send's memory window bound (ibmc_rndv.c) */
    IBMC_WR_MW_INV = 6,         /* ... and invalidated after the FIN */
    IBMC_WR_NODESEG = 7         /* a write into a node segment, or a read that checks on
                                 * its node (ibmc_node_allgather.c): points to the
                                 * segment's MPIDI_IBMC_nodeseg_target_t */
};
#define IBMC_WR_ID(kind, idx) ((((uint64_t) (idx)) << 3) | (uint64_t) (kind))
/* IBMC_WR_RC_SEND's index past the send buffers: a signaled inline RDMA
 * write to world rank `peer`, which holds no buffer (the multicast
 * channel's ACKs, mcast/ibmc_mcast_io.c).  Its completion only frees the send
 * queue slot. */
#define IBMC_WR_INLINE_WRITE_INDEX(st, peer) ((st)->n_sbufs + (peer))
#define IBMC_WR_ID_PTR(kind, p) (((uint64_t) (uintptr_t) (p)) | (uint64_t) (kind))
#define IBMC_WR_KIND(wr_id)   ((int) ((wr_id) & 7))
#define IBMC_WR_INDEX(wr_id)  ((int) ((wr_id) >> 3))
#define IBMC_WR_PTR(wr_id)    ((void *) (uintptr_t) ((wr_id) & ~(uint64_t) 7))

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
    struct MPIDI_IBMC_rndv_send *bind;  /* IBMC_PKT_RNDV: bind its window before the packet */
    MPI_Aint am_hdr_sz;         /* as sent: the compact form's size with IBMC_PKT_F_SEND16 */
    char am_hdr[];
} MPIDI_IBMC_sendop_t;

/* A type 2 memory window and the rkey of its latest bind. */
typedef struct MPIDI_IBMC_mw {
    struct ibv_mw *mw;
    uint32_t rkey;
    struct MPIDI_IBMC_mw *next; /* in the free pool */
} MPIDI_IBMC_mw_t;

/* The sender's half of a rendezvous: its buffer stays registered, and the
 * request incomplete, until the receiver's IBMC_PKT_RNDV_FIN and, with a
 * memory window, until the window is invalidated. */
typedef struct MPIDI_IBMC_rndv_send {
    MPIR_Request *sreq;
    int handler_id;
    int peer;
    MPIDI_IBMC_reg_t reg;
    const void *buf;
    size_t len;
    MPIDI_IBMC_mw_t *mw;        /* the peer reads through it; NULL: through reg's rkey */
    struct MPIDI_IBMC_rndv_send *next;  /* waiting for its window's invalidation */
} MPIDI_IBMC_rndv_send_t;

/* The receiver's half: RDMA READs from the sender's buffer straight into the
 * matched receive buffer (or, when that is not contiguous, into a bounce
 * buffer that is then unpacked). */
typedef struct MPIDI_IBMC_rdma_read {
    struct MPIDI_IBMC_rdma_read *next;
    MPIR_Request *rreq;
    int peer;
    uint64_t raddr;
    uint32_t rkey;
    uint64_t cookie;
    char *laddr;
    size_t len, posted, done;
    int wrs_inflight;
    MPIDI_IBMC_reg_t reg;
    char *bounce;               /* non-NULL: laddr is this, unpack when done */
    int stale_probe;            /* MPIR_CVAR_IBMC_FAULT_QP_ERROR's read of a finished transfer */
} MPIDI_IBMC_rdma_read_t;

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
    MPIDI_IBMC_rdma_read_t *rd_head, *rd_tail;  /* reads not yet fully posted */
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
    MPIDI_IBMC_mw_t *mw_pool;   /* unbound windows */
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

static inline int MPIDI_IBMC_conn_has_work(const MPIDI_IBMC_conn_t * conn)
{
    return ibmc_cm_has_timer(&conn->cm) || conn->q_head || conn->need_rtu || conn->rd_head ||
        conn->credit_pending || conn->inv_head;
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

/* ibmc_device.c */
int MPIDI_IBMC_device_open(ibmc_hca_t * hca, char *name, size_t name_len);

/* ibmc_ud.c */
int MPIDI_IBMC_ud_post_rbuf(MPIDI_IBMC_state_t * st, int idx);
int MPIDI_IBMC_ud_send(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn,
                       const ibmc_cm_msg_t * msg);
int MPIDI_IBMC_ud_recv(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc, int idx);

/* ibmc_init.c: 64 random bits from the kernel */
uint64_t MPIDI_IBMC_random_u64(void);

/* ibmc_qp_fault.c */
enum { IBMC_QP_FAULT_SEND, IBMC_QP_FAULT_READ, IBMC_QP_FAULT_STALE_READ,
    IBMC_QP_FAULT_FORGE_CM, IBMC_QP_FAULT_NODESEG_NOMEM
};
int MPIDI_IBMC_qp_fault_init(MPIDI_IBMC_state_t * st);
void MPIDI_IBMC_qp_fault_posted(MPIDI_IBMC_state_t * st, struct ibv_qp *qp, int is_read);
/* a rendezvous receive sent its FIN: stale_read=N reads again with its rkey */
int MPIDI_IBMC_qp_fault_finished(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn,
                                 const MPIDI_IBMC_rdma_read_t * done);
/* forge_cm=N: called by every process at the end of MPI_Init */
int MPIDI_IBMC_qp_fault_forge(MPIDI_IBMC_state_t * st);
/* nodeseg_nomem=N: whether this process plays out of memory planning a
 * node segment (world rank N does, always) */
int MPIDI_IBMC_qp_fault_nodeseg_nomem(const MPIDI_IBMC_state_t * st);

/* ibmc_conn.c */
int MPIDI_IBMC_conn_event(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn,
                          ibmc_cm_event_t ev, uint32_t qpn);
/* a datagram that passed ibmc_cm_msg's checks: returns IBMC_CM_MSG_OK or the
 * reason to drop it; a failure to act on it goes to *mpi_errno */
int MPIDI_IBMC_conn_recv_cm(MPIDI_IBMC_state_t * st, const ibmc_cm_msg_t * msg, int *mpi_errno);
int MPIDI_IBMC_conn_service_busy(MPIDI_IBMC_state_t * st);
void MPIDI_IBMC_conn_mark_busy(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn);
void MPIDI_IBMC_conn_destroy_all(MPIDI_IBMC_state_t * st);

/* ibmc_am_send.c */
int MPIDI_IBMC_send_drain(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn);
void MPIDI_IBMC_sbuf_release(MPIDI_IBMC_state_t * st, int idx);
int MPIDI_IBMC_send_credit(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn);
/* Drop the control messages of pkt_type queued to conn that have not begun
 * to go; returns how many. */
uint64_t MPIDI_IBMC_send_forget(MPIDI_IBMC_conn_t * conn, int pkt_type);

/* ibmc_finalize.c: deliver what this process owes; the barrier that keeps
 * progress running (ibmc_finbar.h); after the multicast channel has
 * closed, drop its queued messages and wait for the send queues */
int MPIDI_IBMC_fin_drain(MPIDI_IBMC_state_t * st);
int MPIDI_IBMC_fin_barrier(MPIDI_IBMC_state_t * st);
int MPIDI_IBMC_fin_settle(MPIDI_IBMC_state_t * st);

/* ibmc_am_send.c: queue a packet that carries no data of its own:
 * IBMC_PKT_RNDV (AM header + ibmc_rndv_t; data_sz is what the receiver will
 * read), IBMC_PKT_RNDV_FIN (no AM header), IBMC_PKT_MCAST or IBMC_PKT_FIN */
int MPIDI_IBMC_send_ctrl(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, int pkt_type,
                         int handler_id, const void *am_hdr, MPI_Aint am_hdr_sz,
                         const void *extra, MPI_Aint extra_sz, MPI_Aint data_sz, int src_vci,
                         int dst_vci, struct MPIDI_IBMC_rndv_send *bind);

/* ibmc_mem.c */
int MPIDI_IBMC_mem_init(MPIDI_IBMC_state_t * st);
void MPIDI_IBMC_mem_finalize(MPIDI_IBMC_state_t * st);
int MPIDI_IBMC_mem_register(MPIDI_IBMC_state_t * st, const void *buf, size_t len,
                            MPIDI_IBMC_reg_t * reg);
void MPIDI_IBMC_mem_release(MPIDI_IBMC_state_t * st, MPIDI_IBMC_reg_t * reg);

/* ibmc_rndv.c */
int MPIDI_IBMC_rndv_send(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, int handler_id,
                         const void *am_hdr, MPI_Aint am_hdr_sz, const void *buf,
                         MPI_Aint data_sz, int src_vci, int dst_vci, MPIR_Request * sreq,
                         int *sent);
int MPIDI_IBMC_rndv_recv(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn,
                         const ibmc_pkt_view_t * v);
int MPIDI_IBMC_rndv_fin(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, const char *payload,
                        size_t plen);
int MPIDI_IBMC_rndv_post_reads(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn);
int MPIDI_IBMC_rndv_read_done(MPIDI_IBMC_state_t * st, MPIDI_IBMC_rdma_read_t * rd);
int MPIDI_IBMC_rndv_copy_cb(MPIR_Request * rreq);
void MPIDI_IBMC_rndv_free_all(MPIDI_IBMC_state_t * st);
int MPIDI_IBMC_rndv_can_bind(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn);
int MPIDI_IBMC_rndv_post_bind(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn,
                              MPIDI_IBMC_rndv_send_t * rs);
int MPIDI_IBMC_rndv_post_invs(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn);
int MPIDI_IBMC_rndv_mw_done(MPIDI_IBMC_state_t * st, int kind, MPIDI_IBMC_rndv_send_t * rs);

/* ibmc_am_recv.c */
int MPIDI_IBMC_recv_packet(MPIDI_IBMC_state_t * st, uint32_t src_rank, const char *pkt,
                           size_t len);
int MPIDI_IBMC_post_rbuf(MPIDI_IBMC_state_t * st, int idx);
void MPIDI_IBMC_am_rules_refresh(MPIDI_IBMC_state_t * st);
int MPIDI_IBMC_rbuf_reserve(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn);
void MPIDI_IBMC_rbuf_free_chunks(MPIDI_IBMC_state_t * st);
int MPIDI_IBMC_credit_return(MPIDI_IBMC_state_t * st, uint32_t src_rank, int pkt_type,
                             int pkt_flags);

#endif /* IBMC_TYPES_H_INCLUDED */
