/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L4 (send queue): see ibmc_sendq.h.  A message is copied (packed)
 * into registered eager buffers one packet at a time, and its origin
 * callback runs as soon as the last byte is copied out of the user's
 * buffer.  Operations of the layers above ride the same FIFO: a
 * rendezvous announcement, whose window its owner binds first through the
 * operation's pre-post step, a FIN, a multicast repair. */

#include <mpidimpl.h>
#include "ibmc_types.h"
#include "ibmc_sendq.h"
#include "ibmc_buffers.h"
#include "ibmc_conn.h"

static int post_rtu(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    int idx = MPIDI_IBMC_sbuf_alloc(st);
    size_t len = put_ctrl_hdr(st->sbufs[idx].buf, IBMC_PKT_RTU);
    conn->need_rtu = 0;
    return MPIDI_IBMC_post_sbuf(st, conn, idx, len);
}

/* Emit the next packet of `op`; the caller checked can_post(). */
static int post_next_packet(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn,
                            MPIDI_IBMC_sendop_t * op)
{
    int mpi_errno = MPI_SUCCESS;
    const size_t psz = (size_t) MPIDI_IBMC_global.packet_size;
    ibmc_frag_t f;
    int idx = MPIDI_IBMC_sbuf_alloc(st);
    char *p = st->sbufs[idx].buf;

    if (!op->tx.first_done) {
        MPI_Aint data_sz = op->pkt_type == IBMC_PKT_RNDV ? op->rndv_data_sz :
            (MPI_Aint) op->tx.data_sz;
        ibmc_pkt_info_t info = {
            .type = op->pkt_type,
            .flags = op->pkt_flags,
            .handler_id = op->handler_id,
            .src_vci = op->src_vci,
            .dst_vci = op->dst_vci,
            .am_hdr_sz = (size_t) op->am_hdr_sz,
            .has_msg_sz = op->has_msg_sz,
            .msg_sz = (uint64_t) (op->am_hdr_sz + data_sz)
        };
        size_t hlen = ibmc_pkt_put_hdr(p, &info);
        ibmc_frag_next(&op->tx, psz - hlen - (size_t) op->extra_sz, &f);
        p += hlen;
        memcpy(p, op->am_hdr, op->am_hdr_sz + op->extra_sz);
        p += op->am_hdr_sz + op->extra_sz;
    } else {
        p += put_ctrl_hdr(p, IBMC_PKT_AM_CONT);
        ibmc_frag_next(&op->tx, psz - ibmc_pkt_hdr_len(0), &f);
    }
    mpi_errno = pack_data(op->contig, op->data, op->count, op->datatype, (MPI_Aint) f.data_off,
                          p, (MPI_Aint) f.data_len);
    if (mpi_errno) {
        MPIDI_IBMC_sbuf_release(st, idx);
        goto fn_fail;
    }
    p += f.data_len;
    mpi_errno = MPIDI_IBMC_post_sbuf(st, conn, idx, (size_t) (p - st->sbufs[idx].buf));
  fn_fail:
    return mpi_errno;
}

static void complete_op(MPIDI_IBMC_sendop_t * op)
{
    if (op->pkt_type == IBMC_PKT_AM && op->tx.data_sz > 0)
        MPIR_Datatype_release_if_not_builtin(op->datatype);
    if (op->sreq)
        MPIDIG_global.origin_cbs[op->handler_id] (op->sreq);
    MPL_free(op);
}

/* Give credits back explicitly: the traffic is one-sided, so nothing would
 * carry them (see ibmc_credit.h).  If no buffer or slot is free, the
 * connection stays busy and send_drain tries again. */
int MPIDI_IBMC_send_credit(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    if (conn->cm.state != IBMC_CM_CONNECTED || !can_post_credit(st, conn)) {
        conn->credit_pending = 1;
        MPIDI_IBMC_conn_mark_busy(st, conn);
        return MPI_SUCCESS;
    }
    conn->credit_pending = 0;
    int idx = MPIDI_IBMC_sbuf_alloc(st);
    size_t len = put_ctrl_hdr(st->sbufs[idx].buf, IBMC_PKT_CREDIT);
    return MPIDI_IBMC_post_sbuf(st, conn, idx, len);
}

uint64_t MPIDI_IBMC_send_forget(MPIDI_IBMC_conn_t * conn, int pkt_type)
{
    uint64_t n = 0;
    MPIDI_IBMC_sendop_t **p = &conn->q_head, *last = NULL;
    while (*p) {
        MPIDI_IBMC_sendop_t *op = *p;
        /* a control message is one packet: not begun means not sent at all */
        if (op->pkt_type == pkt_type && !op->tx.first_done && !op->sreq && !op->pre_post) {
            *p = op->next;
            complete_op(op);
            n++;
        } else {
            last = op;
            p = &op->next;
        }
    }
    conn->q_tail = last;
    return n;
}

int MPIDI_IBMC_send_drain(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    int mpi_errno = MPI_SUCCESS;

    if (conn->cm.state != IBMC_CM_CONNECTED)
        return MPI_SUCCESS;
    if (conn->need_rtu) {
        if (!can_post(st, conn))
            goto out_of_resources;
        mpi_errno = post_rtu(st, conn);
        MPIR_ERR_CHECK(mpi_errno);
    }
    while (conn->q_head) {
        MPIDI_IBMC_sendop_t *op = conn->q_head;
        if (op->pre_post) {
            /* what the owner posts goes first, in send-queue order, and the
             * packet after it still needs its slot */
            int posted;
            if (!can_post(st, conn))
                goto out_of_resources;
            mpi_errno = op->pre_post(st, conn, op->pre_post_arg, &posted);
            MPIR_ERR_CHECK(mpi_errno);
            if (!posted)
                goto out_of_resources;
            op->pre_post = NULL;
        }
        while (!ibmc_frag_tx_done(&op->tx)) {
            if (!can_post(st, conn))
                goto out_of_resources;
            mpi_errno = post_next_packet(st, conn, op);
            MPIR_ERR_CHECK(mpi_errno);
        }
        conn->q_head = op->next;
        if (!conn->q_head)
            conn->q_tail = NULL;
        complete_op(op);
    }
    /* what the packets above did not piggyback */
    if (conn->credit_pending && ibmc_credit_need_update(&conn->cr))
        mpi_errno = MPIDI_IBMC_send_credit(st, conn);
    else
        conn->credit_pending = 0;
  fn_fail:
    return mpi_errno;
  out_of_resources:
    /* a send completion will free a buffer, or the peer's credits come
     * back; progress comes back here */
    MPIDI_IBMC_conn_mark_busy(st, conn);
    if (!ibmc_credit_can_send(&conn->cr) && !conn->cr.starved) {
        ibmc_credit_mark_starved(&conn->cr);
        MPIDI_IBMC_pvars.credit_stalls++;
    }
    if (conn->credit_pending && ibmc_credit_need_update(&conn->cr))
        return MPIDI_IBMC_send_credit(st, conn);
    return MPI_SUCCESS;
}

/* Append a message to the peer's FIFO and push out what can go now.  `extra`
 * (a control packet's payload) travels after the AM header in the first
 * packet; `data`, if any, is packed behind it. */
int MPIDI_IBMC_send_enqueue(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, int pkt_type,
                            int handler_id, const void *am_hdr, MPI_Aint am_hdr_sz,
                            const void *extra, MPI_Aint extra_sz, const void *data,
                            MPI_Aint count, MPI_Datatype datatype, MPI_Aint data_sz,
                            int src_vci, int dst_vci, MPIR_Request * sreq,
                            MPIDI_IBMC_pre_post_fn pre_post, void *pre_post_arg)
{
    int mpi_errno = MPI_SUCCESS;
    if (conn->cm.state == IBMC_CM_FAILED) {
        /* fatal, as when the connection failed: earlier messages to the
         * peer are lost, so carrying on would be silent loss */
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_FATAL, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**ibmc_connect", "**ibmc_connect %d %d",
                                    conn->rank, MPIR_CVAR_IBMC_CONNECT_TIMEOUT);
    }
    MPIDI_IBMC_sendop_t *op = MPL_malloc(sizeof(*op) + am_hdr_sz + extra_sz, MPL_MEM_BUFFER);
    MPIR_ERR_CHKANDJUMP(!op, mpi_errno, MPI_ERR_OTHER, "**nomem");
    ibmc_send16_fields_t f16;
    /* a rendezvous announcement always says how much data it leaves behind */
    int one_packet = pkt_type == IBMC_PKT_AM &&
        am_hdr_sz + extra_sz + data_sz <= MPIDI_IBMC_global.eager_limit;
    int send16 = one_packet && send16_fields(handler_id, am_hdr, am_hdr_sz, data_sz, &f16);
    op->next = NULL;
    op->sreq = sreq;
    op->pkt_type = pkt_type;
    op->pkt_flags = send16 ? IBMC_PKT_F_SEND16 : 0;
    op->has_msg_sz = (pkt_type == IBMC_PKT_AM && !one_packet) || pkt_type == IBMC_PKT_RNDV;
    op->extra_sz = extra_sz;
    op->rndv_data_sz = pkt_type == IBMC_PKT_RNDV ? data_sz : 0;
    op->data = data;
    op->count = count;
    op->datatype = datatype;
    op->contig = NULL;
    op->handler_id = handler_id;
    op->src_vci = src_vci;
    op->dst_vci = dst_vci;
    op->pre_post = pre_post;
    op->pre_post_arg = pre_post_arg;
    if (send16) {
        op->am_hdr_sz = (MPI_Aint) ibmc_send16_pack(op->am_hdr, &f16);
    } else {
        op->am_hdr_sz = am_hdr_sz;
        if (am_hdr_sz)
            memcpy(op->am_hdr, am_hdr, am_hdr_sz);
    }
    if (extra_sz)
        memcpy(op->am_hdr + op->am_hdr_sz, extra, extra_sz);
    /* a rendezvous announcement carries no data of its own */
    ibmc_frag_tx_init(&op->tx, (size_t) op->am_hdr_sz,
                      pkt_type == IBMC_PKT_AM ? (size_t) data_sz : 0);
    if (pkt_type == IBMC_PKT_AM && data_sz > 0) {
        int dt_contig;
        MPI_Aint true_lb;
        MPIDI_Datatype_check_contig_lb(datatype, dt_contig, true_lb);
        mpi_errno = contig_host_data(data, dt_contig, true_lb, &op->contig);
        if (mpi_errno) {
            MPL_free(op);
            goto fn_fail;
        }
        MPIR_Datatype_add_ref_if_not_builtin(datatype);
    }

    if (conn->q_tail)
        conn->q_tail->next = op;
    else
        conn->q_head = op;
    conn->q_tail = op;

    if (conn->cm.state == IBMC_CM_IDLE) {
        mpi_errno = MPIDI_IBMC_conn_event(st, conn, IBMC_CM_EV_WANT_SEND, 0);
        MPIR_ERR_CHECK(mpi_errno);
    } else if (conn->cm.state == IBMC_CM_CONNECTED) {
        mpi_errno = MPIDI_IBMC_send_drain(st, conn);
        MPIR_ERR_CHECK(mpi_errno);
    }
    /* conn_event (handshake timer) and send_drain (out of buffers) have put
     * the connection on the busy list if anything is left to do */
  fn_fail:
    return mpi_errno;
}

int MPIDI_IBMC_send_ctrl(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, int pkt_type,
                         int handler_id, const void *am_hdr, MPI_Aint am_hdr_sz,
                         const void *extra, MPI_Aint extra_sz, MPI_Aint data_sz, int src_vci,
                         int dst_vci, MPIDI_IBMC_pre_post_fn pre_post, void *pre_post_arg)
{
    return MPIDI_IBMC_send_enqueue(st, conn, pkt_type, handler_id, am_hdr, am_hdr_sz, extra, extra_sz, NULL, 0,
                   MPI_DATATYPE_NULL, data_sz, src_vci, dst_vci, NULL, pre_post,
                   pre_post_arg);
}
