/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Datagram I/O on the process's UD queue pair: posting receive buffers,
 * sending a connection message to a peer, and turning a received datagram
 * into a checked ibmc_cm_msg_t for ibmc_conn.c.  What a datagram must prove
 * before it is believed is in ibmc_cm_msg.h; those that fail are counted
 * (pvar ibmc_cm_dropped) and dropped, never acted on. */

#include <mpidimpl.h>
#include "ibmc_types.h"
#include "ibmc_cm_msg.h"

#define UD_RBUF_STRIDE (IBMC_GRH_BYTES + IBMC_CM_MSG_BYTES)

int MPIDI_IBMC_ud_post_rbuf(MPIDI_IBMC_state_t * st, int idx)
{
    struct ibv_sge sge = {
        .addr = (uintptr_t) (st->ud_rbufs + (size_t) idx * UD_RBUF_STRIDE),
        .length = (uint32_t) UD_RBUF_STRIDE,
        .lkey = st->mr->lkey
    };
    struct ibv_recv_wr wr = {
        .wr_id = IBMC_WR_ID(IBMC_WR_UD_RECV, idx),
        .sg_list = &sge,
        .num_sge = 1
    }, *bad;
    int rc = ibv_post_recv(st->hca.ud_qp, &wr, &bad);
    return rc ? MPIDI_IBMC_VERBS_ERROR("ibv_post_recv(UD)", rc) : MPI_SUCCESS;
}

/* Datagrams may be lost, and the state machine retransmits; so a full UD send
 * queue is not an error: the message is dropped and sent again later. */
int MPIDI_IBMC_ud_send(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn,
                       const ibmc_cm_msg_t * msg)
{
    ibmc_verbs_err_t e;

    if (!conn->ah) {
        if (ibmc_verbs_create_ah(&st->hca, &st->cards[conn->rank], &conn->ah, &e))
            return MPIDI_IBMC_VERBS_ERROR(e.call, e.err);
    }
    if (st->ud_sq_inflight >= st->n_ud_sbufs)
        return MPI_SUCCESS;

    int slot = st->ud_sq_next;
    st->ud_sq_next = (st->ud_sq_next + 1) % st->n_ud_sbufs;
    char *buf = st->ud_sbufs + (size_t) slot * IBMC_CM_MSG_BYTES;
    memcpy(buf, msg, sizeof(*msg));

    struct ibv_sge sge = {
        .addr = (uintptr_t) buf,
        .length = sizeof(*msg),
        .lkey = st->mr->lkey
    };
    struct ibv_send_wr wr, *bad;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = IBMC_WR_ID(IBMC_WR_UD_SEND, slot);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = conn->ah;
    wr.wr.ud.remote_qpn = st->cards[conn->rank].ud_qpn;
    wr.wr.ud.remote_qkey = st->ud_qkey;
    int rc = ibv_post_send(st->hca.ud_qp, &wr, &bad);
    if (rc)
        return MPIDI_IBMC_VERBS_ERROR("ibv_post_send(UD)", rc);
    st->ud_sq_inflight++;
    return MPI_SUCCESS;
}

/* A datagram arrived in receive buffer `idx`: check it, hand a good one to
 * the connection manager, and post the buffer again. */
int MPIDI_IBMC_ud_recv(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc, int idx)
{
    int mpi_errno = MPI_SUCCESS;
    const uint8_t *buf = (const uint8_t *) st->ud_rbufs + (size_t) idx * UD_RBUF_STRIDE;
    ibmc_cm_msg_t msg;
    int rc = IBMC_CM_MSG_ERR_SHORT;

    if (wc->byte_len > IBMC_GRH_BYTES && wc->byte_len <= UD_RBUF_STRIDE)
        rc = ibmc_cm_msg_parse(buf + IBMC_GRH_BYTES, wc->byte_len - IBMC_GRH_BYTES, st->job_key,
                               st->world_size, &msg);
    if (rc == IBMC_CM_MSG_OK) {
        ibmc_cm_src_t src = {
            .src_qp = wc->src_qp,
            .slid = wc->slid,
            .link_layer = st->hca.link_layer == IBV_LINK_LAYER_ETHERNET ?
                IBMC_CM_LINK_ETH : IBMC_CM_LINK_IB,
            .grh = (wc->wc_flags & IBV_WC_GRH) ? buf : NULL
        };
        rc = ibmc_cm_msg_check_source(&st->cards[msg.src_rank], &src);
    }
    if (rc == IBMC_CM_MSG_OK) {
        rc = MPIDI_IBMC_conn_recv_cm(st, &msg, &mpi_errno);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (rc != IBMC_CM_MSG_OK) {
        MPIDI_IBMC_pvars.cm_dropped++;
        /* the first few only: a flood of forgeries must not flood the log */
        if (MPIR_CVAR_IBMC_STATS && MPIDI_IBMC_pvars.cm_dropped <= 10)
            fprintf(stderr, "ibmc-stats: rank %d dropped a datagram: %s\n", st->my_rank,
                    ibmc_cm_msg_strerror(rc));
    }
    mpi_errno = MPIDI_IBMC_ud_post_rbuf(st, idx);
  fn_fail:
    return mpi_errno;
}
