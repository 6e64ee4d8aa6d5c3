/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* On-demand RC connections: carries out what the state machine in
 * ibmc_cm_fsm.c decides, using the UD queue pair for the handshake. */

#include <mpidimpl.h>
#include "ibmc_types.h"

/* Datagrams may be lost, and the state machine retransmits; so a full UD send
 * queue is not an error: the message is dropped and sent again later. */
static int send_cm(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, uint32_t type)
{
    int mpi_errno = MPI_SUCCESS;
    ibmc_verbs_err_t e;

    if (!conn->ah) {
        if (ibmc_verbs_create_ah(&st->hca, &st->cards[conn->rank], &conn->ah, &e))
            return MPIDI_IBMC_verbs_error(e.call, e.err);
    }
    if (st->ud_sq_inflight >= st->n_ud_sbufs)
        return MPI_SUCCESS;

    int slot = st->ud_sq_next;
    st->ud_sq_next = (st->ud_sq_next + 1) % st->n_ud_sbufs;
    ibmc_cm_msg_t *msg = (ibmc_cm_msg_t *) (st->ud_sbufs + (size_t) slot * IBMC_CM_MSG_BYTES);
    msg->magic = IBMC_CM_MAGIC;
    msg->type = type;
    msg->src_rank = (uint32_t) st->my_rank;
    msg->rc_qpn = conn->qp->qp_num;
    msg->job_key = st->job_key;

    struct ibv_sge sge = {
        .addr = (uintptr_t) msg,
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
    wr.wr.ud.remote_qkey = IBMC_UD_QKEY;
    int rc = ibv_post_send(st->hca.ud_qp, &wr, &bad);
    if (rc) {
        e.call = "ibv_post_send(UD)";
        e.err = rc;
        return MPIDI_IBMC_verbs_error(e.call, e.err);
    }
    st->ud_sq_inflight++;
    return mpi_errno;
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
            return MPIDI_IBMC_verbs_error(e.call, e.err);
        MPIDI_IBMC_pvars.rc_connections++;
        /* the peer may send as soon as the handshake ends: back its credits now */
        mpi_errno = MPIDI_IBMC_rbuf_reserve(st, conn);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (act & IBMC_CM_ACT_CONNECT) {
        if (ibmc_verbs_connect_rc_qp(&st->hca, conn->qp, &st->cards[conn->rank],
                                     conn->cm.remote_qpn, &e))
            return MPIDI_IBMC_verbs_error(e.call, e.err);
    }
    if (act & IBMC_CM_ACT_SEND_REQ) {
        mpi_errno = send_cm(st, conn, IBMC_CM_MSG_REQ);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (act & IBMC_CM_ACT_SEND_REP) {
        mpi_errno = send_cm(st, conn, IBMC_CM_MSG_REP);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (act & IBMC_CM_ACT_SEND_RTU)
        conn->need_rtu = 1;
    if (act & IBMC_CM_ACT_FLUSH) {
        mpi_errno = MPIDI_IBMC_send_drain(st, conn);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (act & IBMC_CM_ACT_FAIL) {
        MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**ibmc_connect", "**ibmc_connect %d %d",
                             conn->rank, MPIR_CVAR_IBMC_CONNECT_TIMEOUT);
    }
    if (MPIDI_IBMC_conn_has_work(conn))
        MPIDI_IBMC_conn_mark_busy(st, conn);

  fn_fail:
    return mpi_errno;
}

int MPIDI_IBMC_conn_recv_cm(MPIDI_IBMC_state_t * st, const char *buf, size_t len)
{
    const ibmc_cm_msg_t *msg = (const ibmc_cm_msg_t *) buf;

    /* strays from another job or garbage are dropped, not fatal */
    if (len < sizeof(*msg) || msg->magic != IBMC_CM_MAGIC || msg->job_key != st->job_key ||
        msg->src_rank >= (uint32_t) st->world_size)
        return MPI_SUCCESS;
    MPIDI_IBMC_conn_t *conn = &st->conns[msg->src_rank];
    ibmc_cm_event_t ev;
    if (msg->type == IBMC_CM_MSG_REQ)
        ev = IBMC_CM_EV_RECV_REQ;
    else if (msg->type == IBMC_CM_MSG_REP)
        ev = IBMC_CM_EV_RECV_REP;
    else
        return MPI_SUCCESS;
    return MPIDI_IBMC_conn_event(st, conn, ev, msg->rc_qpn);
}

/* Walk the busy list: fire due handshake timers and push out queued sends.
 * Connections with nothing left to do leave the list. */
int MPIDI_IBMC_conn_service_busy(MPIDI_IBMC_state_t * st)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_IBMC_conn_t *list = st->busy_head;
    double now = 0;

    st->busy_head = NULL;
    while (list) {
        MPIDI_IBMC_conn_t *conn = list;
        list = list->next_busy;
        conn->on_busy_list = 0;
        conn->next_busy = NULL;

        if (ibmc_cm_has_timer(&conn->cm)) {
            if (now == 0)
                now = MPIDI_IBMC_now();
            if (now >= conn->cm.retry_at) {
                mpi_errno = MPIDI_IBMC_conn_event(st, conn, IBMC_CM_EV_TIMER, 0);
                if (mpi_errno)
                    break;
            }
        } else if (conn->cm.state == IBMC_CM_CONNECTED) {
            mpi_errno = MPIDI_IBMC_send_drain(st, conn);
            if (mpi_errno)
                break;
        }
        if (MPIDI_IBMC_conn_has_work(conn))
            MPIDI_IBMC_conn_mark_busy(st, conn);
    }
    /* on error, keep the rest for the next call */
    while (list) {
        MPIDI_IBMC_conn_t *conn = list;
        list = list->next_busy;
        conn->on_busy_list = 0;
        MPIDI_IBMC_conn_mark_busy(st, conn);
    }
    return mpi_errno;
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
