/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L2 (wire): the registered eager buffers and the one place each kind
 * is posted.  Send buffers come from a free list and go out on an RC queue
 * pair with the credits owed to the peer in their header; receive buffers
 * sit in the shared receive queue, grown by chunks as peers connect so that
 * every peer's credits are backed (ibmc_credit.h). */

#ifndef IBMC_BUFFERS_H_INCLUDED
#define IBMC_BUFFERS_H_INCLUDED

#include <endian.h>
#include "ibmc_types.h"
#include "ibmc_qp_fault.h"

/* a free send buffer's index, or -1 */
static inline int MPIDI_IBMC_sbuf_alloc(MPIDI_IBMC_state_t * st)
{
    int idx = st->sbuf_free;
    if (idx >= 0)
        st->sbuf_free = st->sbufs[idx].next_free;
    return idx;
}

void MPIDI_IBMC_sbuf_release(MPIDI_IBMC_state_t * st, int idx);
/* Post send buffer idx, its first len bytes a packet, to conn; the caller
 * checked the send queue and the credits.  Inline: on the one-packet send
 * path the call would cost more than a few per cent of the send
 * (bench/msg-cost.sh counts instructions per message). */
static inline int MPIDI_IBMC_post_sbuf(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, int idx, size_t len)
{
    int mpi_errno = MPI_SUCCESS;
    struct ibv_sge sge = {
        .addr = (uintptr_t) st->sbufs[idx].buf,
        .length = (uint32_t) len,
        .lkey = st->mr->lkey
    };
    struct ibv_send_wr wr, *bad;
    ibmc_pkt_hdr_t *h = (ibmc_pkt_hdr_t *) st->sbufs[idx].buf;

    /* every packet gives back what we owe; all but credit packets use one,
     * and the first after a wait for credits asks for a larger window */
    h->credits = (uint16_t) ibmc_credit_take(&conn->cr);
    if (h->type != IBMC_PKT_CREDIT) {
        ibmc_credit_consume(&conn->cr);
        if (ibmc_credit_take_starved(&conn->cr))
            h->flags |= IBMC_PKT_F_STARVED;
    }
    wr = (struct ibv_send_wr) {
        .wr_id = MPIDI_IBMC_wr_id_index(IBMC_WR_RC_SEND, (uint32_t) idx),
        .sg_list = &sge,
        .num_sge = 1,
        .opcode = IBV_WR_SEND_WITH_IMM,
        .imm_data = htobe32((uint32_t) st->my_rank),
        .send_flags = IBV_SEND_SIGNALED | (len <= st->hca.rc_max_inline ? IBV_SEND_INLINE : 0)
    };
    st->sbufs[idx].peer = conn->rank;
    int rc = ibv_post_send(conn->qp, &wr, &bad);
    if (rc) {
        MPIDI_IBMC_sbuf_release(st, idx);
        mpi_errno = MPIDI_IBMC_VERBS_ERROR("ibv_post_send(RC)", rc);
        goto fn_fail;
    }
    conn->sq_inflight++;
    if (unlikely(st->qp_fault_at))
        MPIDI_IBMC_qp_fault_posted(st, conn->qp, 0);
    conn->tx_pkts++;
    conn->tx_bytes += len;
    conn->upkeep_pkts += ibmc_pkt_is_upkeep(h->type);
    if (h->type == IBMC_PKT_AM || h->type == IBMC_PKT_AM_CONT) {
        MPIDI_IBMC_pvars.eager_pkts_sent++;
        MPIDI_IBMC_pvars.eager_bytes_sent += len;
        if (h->flags & IBMC_PKT_F_SEND16)
            MPIDI_IBMC_pvars.compact_send_hdrs++;
    } else {
        MPIDI_IBMC_pvars.ctrl_pkts_sent++;
    }
  fn_fail:
    return mpi_errno;
}

int MPIDI_IBMC_post_rbuf(MPIDI_IBMC_state_t * st, int idx);
/* back the credits a new connection is promised with posted buffers */
int MPIDI_IBMC_rbuf_reserve(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn);
void MPIDI_IBMC_rbuf_free_chunks(MPIDI_IBMC_state_t * st);

/* a completion of kind IBMC_WR_RC_SEND or IBMC_WR_INLINE_WRITE: the send
 * queue slot, and the buffer, are free again */
int MPIDI_IBMC_send_completion(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc);

#endif /* IBMC_BUFFERS_H_INCLUDED */
