/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* On-demand RC connections: carries out what the state machine in
 * ibmc_cm_fsm.c decides, using the UD queue pair for the handshake. */

#include <mpidimpl.h>
#include "ibmc_types.h"
#include "ibmc_buffers.h"
#include "ibmc_util.h"
#include "ibmc_cm_msg.h"
#include "ibmc_conn.h"
#include "ibmc_ud.h"

/* A REQ or REP for `conn`.  Its RC QP's number and first PSN go with it;
 * a REQ carries this side's nonce, a REP echoes the peer's. */
static int send_cm(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, uint32_t type)
{
    ibmc_cm_msg_t msg;

    memset(&msg, 0, sizeof(msg));
    msg.magic = IBMC_CM_MAGIC;
    msg.type = type;
    msg.src_rank = (uint32_t) st->my_rank;
    msg.rc_qpn = conn->qp->qp_num;
    msg.rc_psn = conn->psn;
    msg.job_key = st->job_key;
    msg.nonce = conn->nonce;
    msg.echo = type == IBMC_CM_MSG_REP ? conn->peer_nonce : 0;
    return MPIDI_IBMC_ud_send(st, conn, &msg);
}

void MPIDI_IBMC_conn_mark_busy(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    if (!conn->on_busy_list) {
        conn->on_busy_list = 1;
        conn->next_busy = st->busy_head;
        st->busy_head = conn;
    }
}

int MPIDI_IBMC_conn_event(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn,
                          ibmc_cm_event_t ev, uint32_t qpn)
{
    int mpi_errno = MPI_SUCCESS;
    ibmc_verbs_err_t e;
    unsigned act = ibmc_cm_step(&conn->cm, ev, qpn, MPIDI_IBMC_now(), &st->cm_timing);

    if (act & IBMC_CM_ACT_CREATE_QP) {
        if (ibmc_verbs_create_rc_qp(&st->hca, st->sq_depth, &conn->qp, &e))
            return MPIDI_IBMC_VERBS_ERROR(e.call, e.err);
        MPIDI_IBMC_pvars.rc_connections++;
        /* random first PSNs: a stale or forged packet cannot guess where the
         * connection's sequence is */
        conn->psn = (uint32_t) MPIDI_IBMC_random_u64() & IBMC_PSN_MASK;
        conn->nonce = MPIDI_IBMC_random_u64();
        /* the peer may send as soon as the handshake ends: back its credits now */
        mpi_errno = MPIDI_IBMC_rbuf_reserve(st, conn);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (act & IBMC_CM_ACT_CONNECT) {
        if (ibmc_verbs_connect_rc_qp(&st->hca, conn->qp, &st->cards[conn->rank],
                                     conn->cm.remote_qpn, conn->peer_psn, conn->psn, &e))
            return MPIDI_IBMC_VERBS_ERROR(e.call, e.err);
    }
    if (act & IBMC_CM_ACT_SEND_REQ) {
        conn->nonce_sent = 1;
        mpi_errno = send_cm(st, conn, IBMC_CM_MSG_REQ);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (act & IBMC_CM_ACT_SEND_REP) {
        mpi_errno = send_cm(st, conn, IBMC_CM_MSG_REP);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (act & IBMC_CM_ACT_SEND_RTU)
        conn->need_rtu = 1;
    /* what waited for the handshake goes out when progress next walks the
     * busy list, at the end of this poll: the connection manager sits below
     * the send queue and does not call it */
    if (act & IBMC_CM_ACT_FLUSH)
        MPIDI_IBMC_conn_mark_busy(st, conn);
    if (act & IBMC_CM_ACT_FAIL) {
        /* fatal: the messages queued for the peer can never be delivered */
        mpi_errno = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_FATAL, __func__, __LINE__,
                                         MPI_ERR_OTHER, "**ibmc_connect", "**ibmc_connect %d %d",
                                         conn->rank, MPIR_CVAR_IBMC_CONNECT_TIMEOUT);
        goto fn_fail;
    }
    if (MPIDI_IBMC_conn_has_work(conn))
        MPIDI_IBMC_conn_mark_busy(st, conn);

  fn_fail:
    return mpi_errno;
}

int MPIDI_IBMC_conn_recv_cm(MPIDI_IBMC_state_t * st, const ibmc_cm_msg_t * msg, int *mpi_errno)
{
    MPIDI_IBMC_conn_t *conn = &st->conns[msg->src_rank];
    ibmc_cm_event_t ev = IBMC_CM_EV_RECV_REQ;

    *mpi_errno = MPI_SUCCESS;
    if (msg->type == IBMC_CM_MSG_REP) {
        /* only an answer to a REQ of ours: its nonce never left this pair */
        if (!conn->nonce_sent || msg->echo != conn->nonce)
            return IBMC_CM_MSG_ERR_ECHO;
        ev = IBMC_CM_EV_RECV_REP;
    }
    /* the PSN travels with the QP number it belongs to; the state machine
     * decides whether to connect to them */
    conn->peer_psn = msg->rc_psn & IBMC_PSN_MASK;
    if (ev == IBMC_CM_EV_RECV_REQ)
        conn->peer_nonce = msg->nonce;
    *mpi_errno = MPIDI_IBMC_conn_event(st, conn, ev, msg->rc_qpn);
    return IBMC_CM_MSG_OK;
}

void MPIDI_IBMC_conn_destroy_all(MPIDI_IBMC_state_t * st)
{
    if (!st->conns)
        return;
    for (int i = 0; i < st->world_size; i++) {
        MPIDI_IBMC_conn_t *c = &st->conns[i];
        if (c->qp)
            ibv_destroy_qp(c->qp);
        if (c->ah)
            ibv_destroy_ah(c->ah);
        c->qp = NULL;
        c->ah = NULL;
        MPL_free(ibmc_reasm_take(&c->rx));
        while (c->q_head) {
            MPIDI_IBMC_sendop_t *op = c->q_head;
            c->q_head = op->next;
            MPL_free(op);
        }
    }
}
