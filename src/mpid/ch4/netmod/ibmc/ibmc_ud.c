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
#include "ibmc_util.h"
#include "ibmc_cm_msg.h"
#include "ibmc_qp_fault.h"
#include "ibmc_ud.h"

#define UD_RBUF_STRIDE (IBMC_GRH_BYTES + IBMC_CM_MSG_BYTES)

int MPIDI_IBMC_ud_post_rbuf(MPIDI_IBMC_state_t * st, int idx)
{
    struct ibv_sge sge = {
        .addr = (uintptr_t) (st->ud_rbufs + (size_t) idx * UD_RBUF_STRIDE),
        .length = (uint32_t) UD_RBUF_STRIDE,
        .lkey = st->mr->lkey
    };
    struct ibv_recv_wr wr = {
        .wr_id = MPIDI_IBMC_wr_id_index(IBMC_WR_UD_RECV, (uint32_t) idx),
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
    wr.wr_id = MPIDI_IBMC_wr_id_index(IBMC_WR_UD_SEND, (uint32_t) slot);
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

/* A datagram arrived in a receive buffer: check it, copy a good one to
 * *msg with *verdict IBMC_CM_MSG_OK (otherwise the reason to drop it), and
 * post the buffer again.  The caller hands a good one to the connection
 * manager: this layer sits below it and does not call up. */
int MPIDI_IBMC_ud_recv(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc, ibmc_cm_msg_t * msg,
                       int *verdict)
{
    int idx = (int) MPIDI_IBMC_wr_index(wc->wr_id);
    const uint8_t *buf = (const uint8_t *) st->ud_rbufs + (size_t) idx * UD_RBUF_STRIDE;
    int rc = IBMC_CM_MSG_ERR_SHORT;

    if (wc->status != IBV_WC_SUCCESS)
        return MPIDI_IBMC_wc_error("connection datagram receive", -1, wc);

    if (wc->byte_len > IBMC_GRH_BYTES && wc->byte_len <= UD_RBUF_STRIDE)
        rc = ibmc_cm_msg_parse(buf + IBMC_GRH_BYTES, wc->byte_len - IBMC_GRH_BYTES, st->job_key,
                               st->world_size, msg);
    if (rc == IBMC_CM_MSG_OK) {
        ibmc_cm_src_t src = {
            .src_qp = wc->src_qp,
            .slid = wc->slid,
            .link_layer = st->hca.link_layer == IBV_LINK_LAYER_ETHERNET ?
                IBMC_CM_LINK_ETH : IBMC_CM_LINK_IB,
            .grh = (wc->wc_flags & IBV_WC_GRH) ? buf : NULL
        };
        rc = ibmc_cm_msg_check_source(&st->cards[msg->src_rank], &src);
    }
    *verdict = rc;
    return MPIDI_IBMC_ud_post_rbuf(st, idx);
}

int MPIDI_IBMC_ud_send_completion(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc)
{
    if (wc->status != IBV_WC_SUCCESS)
        return MPIDI_IBMC_wc_error("connection datagram send", -1, wc);
    st->ud_sq_inflight--;
    return MPI_SUCCESS;
}

void MPIDI_IBMC_ud_dropped(MPIDI_IBMC_state_t * st, int verdict)
{
    MPIDI_IBMC_pvars.cm_dropped++;
    /* the first few only: a flood of forgeries must not flood the log */
    if (MPIR_CVAR_IBMC_STATS && MPIDI_IBMC_pvars.cm_dropped <= 10)
        fprintf(stderr, "ibmc-stats: rank %d dropped a datagram: %s\n", st->my_rank,
                ibmc_cm_msg_strerror(verdict));
}

/* forge_cm=N: world rank N sends rank 0 a REQ and a REP with the job's key
 * and another rank's name, which rank 0's checks above must drop. */
int MPIDI_IBMC_ud_forge_test(MPIDI_IBMC_state_t * st)
{
    int mpi_errno = MPI_SUCCESS, claimed;
    /* everyone's datagram queue pair has the job's Q_Key by now, so what is
     * sent below reaches ibmc's checks instead of the HCA's */
    mpi_errno = MPIR_pmi_barrier();
    MPIR_ERR_CHECK(mpi_errno);
    if (!MPIDI_IBMC_qp_fault_forger(st, &claimed))
        goto fn_exit;

    for (uint32_t type = IBMC_CM_MSG_REQ; type <= IBMC_CM_MSG_REP; type++) {
        ibmc_cm_msg_t msg;
        memset(&msg, 0, sizeof(msg));
        msg.magic = IBMC_CM_MAGIC;
        msg.type = type;
        msg.src_rank = (uint32_t) claimed;
        msg.rc_qpn = 0xbad;
        msg.rc_psn = 1;
        msg.job_key = st->job_key;
        msg.nonce = MPIDI_IBMC_random_u64();
        msg.echo = MPIDI_IBMC_random_u64();
        mpi_errno = MPIDI_IBMC_ud_send(st, &st->conns[0], &msg);
        MPIR_ERR_CHECK(mpi_errno);
    }
    fprintf(stderr, "ibmc: MPIR_CVAR_IBMC_FAULT_QP_ERROR: rank %d sent rank 0 a REQ and a REP "
            "that claim to come from rank %d\n", st->my_rank, claimed);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
