/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The netmod's private state.  Only ibmc's own sources include this. */

#ifndef IBMC_TYPES_H_INCLUDED
#define IBMC_TYPES_H_INCLUDED

#include "ibmc_impl.h"
#include "ibmc_verbs.h"
#include "ibmc_wire.h"
#include "ibmc_cm_fsm.h"
#include "ibmc_frag.h"

/* Work-request ids: the low two bits say what the completion is for, the rest
 * index the buffer it used. */
enum {
    IBMC_WR_RC_SEND = 0,
    IBMC_WR_RC_RECV = 1,
    IBMC_WR_UD_SEND = 2,
    IBMC_WR_UD_RECV = 3
};
#define IBMC_WR_ID(kind, idx) ((((uint64_t) (idx)) << 2) | (uint64_t) (kind))
#define IBMC_WR_KIND(wr_id)   ((int) ((wr_id) & 3))
#define IBMC_WR_INDEX(wr_id)  ((int) ((wr_id) >> 2))

#define IBMC_CM_MSG_BYTES 64    /* UD buffer payload; a CM message is smaller */

/* An active message waiting to be (fully) packetised.  The AM header is
 * copied because the caller's copy may live on its stack. */
typedef struct MPIDI_IBMC_sendop {
    struct MPIDI_IBMC_sendop *next;
    MPIR_Request *sreq;         /* completed through origin_cbs once all data is copied out */
    const void *data;
    MPI_Aint count;
    MPI_Datatype datatype;
    ibmc_frag_tx_t tx;
    int handler_id;
    int src_vci;
    int dst_vci;
    MPI_Aint am_hdr_sz;
    char am_hdr[];
} MPIDI_IBMC_sendop_t;

/* One peer: its RC queue pair and everything in flight to or from it. */
typedef struct MPIDI_IBMC_conn {
    int rank;                   /* in MPI_COMM_WORLD */
    ibmc_cm_t cm;
    struct ibv_qp *qp;
    struct ibv_ah *ah;          /* for connection datagrams */
    int sq_inflight;            /* posted sends not yet completed */
    int need_rtu;               /* the handshake's RTU still has to be posted */
    MPIDI_IBMC_sendop_t *q_head, *q_tail;
    struct MPIDI_IBMC_conn *next_busy;
    int on_busy_list;

    /* the message being reassembled (see ibmc_frag.h) */
    ibmc_reasm_t rx;
    int rx_handler_id, rx_src_vci, rx_dst_vci;
    MPI_Aint rx_am_hdr_sz;

    /* statistics, printed with MPIR_CVAR_IBMC_STATS */
    uint64_t tx_pkts, tx_bytes, rx_pkts, rx_bytes;
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
    char *rbufs;
    int n_rbufs;
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
    ibmc_card_t *cards;         /* every process's business card, by world rank */
    MPIDI_IBMC_conn_t *conns;   /* by world rank */
    MPIDI_IBMC_conn_t *busy_head;       /* conns with queued sends or a handshake timer */
    ibmc_cm_timing_t cm_timing;
    int yield;                  /* sched_yield() when a poll finds nothing */
} MPIDI_IBMC_state_t;

#define MPIDI_IBMC_STATE() (MPIDI_IBMC_global.state)

/* Seconds on MPL's clock, for the handshake timers. */
static inline double MPIDI_IBMC_now(void)
{
    MPL_time_t t;
    double d;
    MPL_wtime(&t);
    MPL_wtime_todouble(&t, &d);
    return d;
}

/* ibmc_init.c: an MPICH error naming the verbs call that failed */
int MPIDI_IBMC_verbs_error(const char *call, int err);

/* ibmc_device.c */
int MPIDI_IBMC_device_open(ibmc_hca_t * hca, char *name, size_t name_len);

/* ibmc_conn.c */
int MPIDI_IBMC_conn_event(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn,
                          ibmc_cm_event_t ev, uint32_t qpn);
int MPIDI_IBMC_conn_recv_cm(MPIDI_IBMC_state_t * st, const char *buf, size_t len);
int MPIDI_IBMC_conn_service_busy(MPIDI_IBMC_state_t * st);
void MPIDI_IBMC_conn_mark_busy(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn);
void MPIDI_IBMC_conn_destroy_all(MPIDI_IBMC_state_t * st);

/* ibmc_am_send.c */
int MPIDI_IBMC_send_drain(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn);
void MPIDI_IBMC_sbuf_release(MPIDI_IBMC_state_t * st, int idx);

/* ibmc_am_recv.c */
int MPIDI_IBMC_recv_packet(MPIDI_IBMC_state_t * st, const char *pkt, size_t len);
int MPIDI_IBMC_post_rbuf(MPIDI_IBMC_state_t * st, int idx);
int MPIDI_IBMC_post_ud_rbuf(MPIDI_IBMC_state_t * st, int idx);

#endif /* IBMC_TYPES_H_INCLUDED */
