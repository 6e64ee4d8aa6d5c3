/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Receiving: eager buffers in the shared receive queue (grown as peers
 * connect, so that every peer's credits are backed), packets handed to
 * MPIDIG's target callbacks, multi-packet messages reassembled per peer,
 * credits given back. */

#include <mpidimpl.h>
#include <endian.h>
#include "ibmc_types.h"
#include "ibmc_buffers.h"
#include "ibmc_util.h"
#include "mcast/ibmc_mcast.h"
#include "ibmc_am_check.h"
#include "ibmc_am_recv.h"
#include "ibmc_conn.h"
#include "ibmc_rndv.h"
#include "ibmc_sendq.h"

/* A packet's buffer is posted again: owe the sender a credit for it (and
 * lend it more if it waited for credits), and give credits back explicitly
 * if the traffic is one-sided. */
int MPIDI_IBMC_credit_return(MPIDI_IBMC_state_t * st, uint32_t src_rank, int pkt_type,
                             int pkt_flags)
{
    if (src_rank >= (uint32_t) st->world_size || pkt_type == IBMC_PKT_CREDIT)
        return MPI_SUCCESS;
    MPIDI_IBMC_conn_t *conn = &st->conns[src_rank];
    uint64_t lends = conn->cr.lends;
    ibmc_credit_received(&conn->cr, &st->rpool, pkt_flags & IBMC_PKT_F_STARVED);
    MPIDI_IBMC_pvars.credit_lends += conn->cr.lends - lends;
    if (ibmc_credit_need_update(&conn->cr))
        return MPIDI_IBMC_send_credit(st, conn);
    return MPI_SUCCESS;
}

/* The least CH4 AM header each of MPIDIG's own handlers reads: its message
 * struct (ch4_types.h).  Handlers registered at run time are only checked
 * for being registered. */
static const unsigned short am_hdr_min[MPIDIG_HANDLER_STATIC_MAX] = {
    [MPIDIG_SEND] = sizeof(MPIDIG_hdr_t),
    [MPIDIG_SEND_CTS] = sizeof(MPIDIG_send_cts_msg_t),
    [MPIDIG_SEND_DATA] = sizeof(MPIDIG_send_data_msg_t),
    [MPIDIG_SSEND_ACK] = sizeof(MPIDIG_ssend_ack_msg_t),
    [MPIDIG_PART_SEND_INIT] = sizeof(MPIDIG_part_send_init_msg_t),
    [MPIDIG_PART_CTS] = sizeof(MPIDIG_part_cts_msg_t),
    [MPIDIG_PART_SEND_DATA] = sizeof(MPIDIG_part_send_data_msg_t),
    [MPIDIG_PUT_REQ] = sizeof(MPIDIG_put_msg_t),
    [MPIDIG_PUT_ACK] = sizeof(MPIDIG_put_ack_msg_t),
    [MPIDIG_PUT_DT_REQ] = sizeof(MPIDIG_put_msg_t),
    [MPIDIG_PUT_DAT_REQ] = sizeof(MPIDIG_put_dat_msg_t),
    [MPIDIG_PUT_DT_ACK] = sizeof(MPIDIG_put_dt_ack_msg_t),
    [MPIDIG_GET_REQ] = sizeof(MPIDIG_get_msg_t),
    [MPIDIG_GET_ACK] = sizeof(MPIDIG_get_ack_msg_t),
    [MPIDIG_ACC_REQ] = sizeof(MPIDIG_acc_req_msg_t),
    [MPIDIG_ACC_ACK] = sizeof(MPIDIG_acc_ack_msg_t),
    [MPIDIG_ACC_DT_REQ] = sizeof(MPIDIG_acc_req_msg_t),
    [MPIDIG_ACC_DAT_REQ] = sizeof(MPIDIG_acc_dat_msg_t),
    [MPIDIG_ACC_DT_ACK] = sizeof(MPIDIG_acc_dt_ack_msg_t),
    [MPIDIG_GET_ACC_REQ] = sizeof(MPIDIG_get_acc_req_msg_t),
    [MPIDIG_GET_ACC_ACK] = sizeof(MPIDIG_get_acc_ack_msg_t),
    [MPIDIG_GET_ACC_DT_REQ] = sizeof(MPIDIG_get_acc_req_msg_t),
    [MPIDIG_GET_ACC_DAT_REQ] = sizeof(MPIDIG_get_acc_dat_msg_t),
    [MPIDIG_GET_ACC_DT_ACK] = sizeof(MPIDIG_get_acc_dt_ack_msg_t),
    [MPIDIG_CSWAP_REQ] = sizeof(MPIDIG_cswap_req_msg_t),
    [MPIDIG_CSWAP_ACK] = sizeof(MPIDIG_cswap_ack_msg_t),
    [MPIDIG_WIN_COMPLETE] = sizeof(MPIDIG_win_cntrl_msg_t),
    [MPIDIG_WIN_POST] = sizeof(MPIDIG_win_cntrl_msg_t),
    [MPIDIG_WIN_LOCK] = sizeof(MPIDIG_win_cntrl_msg_t),
    [MPIDIG_WIN_LOCK_ACK] = sizeof(MPIDIG_win_cntrl_msg_t),
    [MPIDIG_WIN_UNLOCK] = sizeof(MPIDIG_win_cntrl_msg_t),
    [MPIDIG_WIN_UNLOCK_ACK] = sizeof(MPIDIG_win_cntrl_msg_t),
    [MPIDIG_WIN_LOCKALL] = sizeof(MPIDIG_win_cntrl_msg_t),
    [MPIDIG_WIN_LOCKALL_ACK] = sizeof(MPIDIG_win_cntrl_msg_t),
    [MPIDIG_WIN_UNLOCKALL] = sizeof(MPIDIG_win_cntrl_msg_t),
    [MPIDIG_WIN_UNLOCKALL_ACK] = sizeof(MPIDIG_win_cntrl_msg_t),
};

/* Fill the rules a packet's handler, VCIs and header are held to
 * (ibmc_am_check.h) from MPIDIG's tables.  Run at init and again before a
 * packet is refused, since MPICH may register a handler after the netmod
 * started. */
void MPIDI_IBMC_am_rules_refresh(MPIDI_IBMC_state_t * st)
{
    ibmc_am_rules_t *r = &st->am_rules;

    MPL_COMPILE_TIME_ASSERT(MPIDI_AM_HANDLERS_MAX <= IBMC_PKT_MAX_HANDLERS);
    MPL_COMPILE_TIME_ASSERT(MPIDIG_HANDLER_STATIC_MAX <= MPIDI_AM_HANDLERS_MAX);
    r->n_handlers = MPIDI_AM_HANDLERS_MAX;
    r->n_vcis = (unsigned) MPL_MIN(MPIDI_global.n_vcis, IBMC_PKT_MAX_VCIS);
    r->rndv_handler = MPIDIG_SEND;
    for (int i = 0; i < MPIDI_AM_HANDLERS_MAX; i++) {
        r->registered[i] = MPIDIG_global.target_msg_cbs[i] != NULL;
        r->hdr_min[i] = i < MPIDIG_HANDLER_STATIC_MAX ? am_hdr_min[i] : 0;
    }
}

static int check_am(MPIDI_IBMC_state_t * st, const ibmc_pkt_view_t * v)
{
    int rc = ibmc_am_check(v, &st->am_rules);
    if (rc != IBMC_AM_OK) {
        MPIDI_IBMC_am_rules_refresh(st);
        rc = ibmc_am_check(v, &st->am_rules);
    }
    return rc;
}

static int deliver(int handler_id, int src_vci, int dst_vci, void *am_hdr, void *data,
                   MPI_Aint data_sz)
{
    uint32_t attr = 0;
    MPIDIG_AM_ATTR_SET_VCIS(attr, src_vci, dst_vci);
    return MPIDIG_global.target_msg_cbs[handler_id] (am_hdr, data, data_sz, attr, NULL);
}

/* An eager MPIDIG_SEND whose header came in its 16-byte form (ibmc_send16_t):
 * rebuild the MPIDIG_hdr_t the handler reads.  The handler copies what it
 * keeps, so the header may live on this stack. */
static int deliver_send16(const MPIDI_IBMC_conn_t * conn, const ibmc_pkt_view_t * v)
{
    ibmc_send16_fields_t f;
    MPIDIG_hdr_t hdr;
    size_t used = ibmc_send16_unpack(v->payload, v->plen, &f);

    if (v->handler_id != MPIDIG_SEND || !used || used != v->am_hdr_sz)
        return MPIDI_IBMC_PROTO_ERROR(conn->rank, "a malformed compact send header");
    memset(&hdr, 0, sizeof(hdr));
    hdr.src_rank = f.src_rank;
    hdr.tag = f.tag;
    hdr.context_id = (MPIR_Context_id_t) f.context_id;
    hdr.error_bits = f.error_bits;
    hdr.flags = f.flags;
    hdr.sreq_ptr = (MPIR_Request *) (uintptr_t) f.sreq;
    hdr.data_sz = (MPI_Aint) (v->plen - used);
    hdr.rndv_hdr_sz = 0;
    return deliver(MPIDIG_SEND, v->src_vci, v->dst_vci, &hdr, (char *) v->payload + used,
                   hdr.data_sz);
}

int MPIDI_IBMC_recv_packet(MPIDI_IBMC_state_t * st, uint32_t src_rank, const char *pkt,
                           size_t len)
{
    int mpi_errno = MPI_SUCCESS;
    ibmc_pkt_view_t v;

    if (src_rank >= (uint32_t) st->world_size)
        return MPIDI_IBMC_PROTO_ERROR(-1, "a packet without a valid sender rank in its immediate data");
    MPIDI_IBMC_conn_t *conn = &st->conns[src_rank];
    int rc = ibmc_pkt_parse(pkt, len, sizeof(ibmc_rndv_t), &v);
    if (rc)
        return MPIDI_IBMC_PROTO_ERROR(conn->rank, ibmc_pkt_strerror(rc));

    conn->rx_pkts++;
    conn->rx_bytes += len;
    conn->upkeep_pkts += ibmc_pkt_is_upkeep(v.type);
    if (v.type == IBMC_PKT_AM || v.type == IBMC_PKT_AM_CONT) {
        MPIDI_IBMC_pvars.eager_pkts_recvd++;
        MPIDI_IBMC_pvars.eager_bytes_recvd += len;
    }
    if (conn->cm.state != IBMC_CM_CONNECTED) {
        mpi_errno = MPIDI_IBMC_conn_event(st, conn, IBMC_CM_EV_RECV_RC, 0);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (v.credits) {
        if (ibmc_credit_grant(&conn->cr, v.credits))
            return MPIDI_IBMC_PROTO_ERROR(conn->rank, "more credits back than it was given");
        /* sends that waited for credits can go */
        if (conn->q_head || conn->need_rtu)
            MPIDI_IBMC_conn_mark_busy(st, conn);
    }
    if (v.type == IBMC_PKT_AM || v.type == IBMC_PKT_RNDV) {
        rc = check_am(st, &v);
        if (rc != IBMC_AM_OK)
            return MPIDI_IBMC_PROTO_ERROR(conn->rank, ibmc_am_strerror(rc));
    }

    switch (v.type) {
        case IBMC_PKT_RTU:
        case IBMC_PKT_CREDIT:
            break;

        case IBMC_PKT_AM:
            if (ibmc_reasm_active(&conn->rx))
                return MPIDI_IBMC_PROTO_ERROR(conn->rank, ibmc_reasm_strerror(IBMC_REASM_ERR_BUSY));
            if (v.flags & IBMC_PKT_F_SEND16) {
                mpi_errno = deliver_send16(conn, &v);
                MPIR_ERR_CHECK(mpi_errno);
            } else if (!(v.flags & IBMC_PKT_F_MSG_SZ)) {
                /* the whole message is here: hand it over in place */
                char *am_hdr = (char *) v.payload;
                mpi_errno = deliver(v.handler_id, v.src_vci, v.dst_vci, am_hdr,
                                    am_hdr + v.am_hdr_sz, (MPI_Aint) (v.plen - v.am_hdr_sz));
                MPIR_ERR_CHECK(mpi_errno);
            } else {
                char *buf = MPL_malloc(v.msg_sz, MPL_MEM_BUFFER);
                MPIR_ERR_CHKANDJUMP(!buf, mpi_errno, MPI_ERR_OTHER, "**nomem");
                rc = ibmc_reasm_first(&conn->rx, buf, v.msg_sz, v.payload, v.plen);
                if (rc < 0) {
                    MPL_free(buf);
                    return MPIDI_IBMC_PROTO_ERROR(conn->rank, ibmc_reasm_strerror(rc));
                }
                conn->rx_handler_id = v.handler_id;
                conn->rx_src_vci = v.src_vci;
                conn->rx_dst_vci = v.dst_vci;
                conn->rx_am_hdr_sz = (MPI_Aint) v.am_hdr_sz;
            }
            break;

        case IBMC_PKT_AM_CONT:{
                rc = ibmc_reasm_cont(&conn->rx, v.payload, v.plen);
                if (rc < 0)
                    return MPIDI_IBMC_PROTO_ERROR(conn->rank, ibmc_reasm_strerror(rc));
                if (rc == IBMC_REASM_COMPLETE) {
                    MPI_Aint msg_sz = (MPI_Aint) conn->rx.msg_sz;
                    char *buf = ibmc_reasm_take(&conn->rx);
                    mpi_errno = deliver(conn->rx_handler_id, conn->rx_src_vci, conn->rx_dst_vci,
                                        buf, buf + conn->rx_am_hdr_sz,
                                        msg_sz - conn->rx_am_hdr_sz);
                    MPL_free(buf);
                    MPIR_ERR_CHECK(mpi_errno);
                }
                break;
            }

        case IBMC_PKT_RNDV:
            if (ibmc_reasm_active(&conn->rx))
                return MPIDI_IBMC_PROTO_ERROR(conn->rank, "a rendezvous inside a fragmented message");
            mpi_errno = MPIDI_IBMC_rndv_recv(st, conn, &v);
            MPIR_ERR_CHECK(mpi_errno);
            break;

        case IBMC_PKT_RNDV_FIN:
            mpi_errno = MPIDI_IBMC_rndv_fin(st, conn, v.payload, v.plen);
            MPIR_ERR_CHECK(mpi_errno);
            break;

        case IBMC_PKT_MCAST:
            mpi_errno = MPIDI_IBMC_mcast_recv_rc(st, conn->rank, v.payload, v.plen);
            MPIR_ERR_CHECK(mpi_errno);
            break;

        case IBMC_PKT_FIN:{
                ibmc_fin_t f;
                if (v.plen != sizeof(f))
                    return MPIDI_IBMC_PROTO_ERROR(conn->rank,
                                                  "a finalize barrier message of a wrong size");
                memcpy(&f, v.payload, sizeof(f));
                rc = ibmc_finbar_heard(&st->finbar, conn->rank,
                                       f.round > INT_MAX ? -1 : (int) f.round);
                if (rc != IBMC_FINBAR_OK)
                    return MPIDI_IBMC_PROTO_ERROR(conn->rank, ibmc_finbar_strerror(rc));
                break;
            }

        default:
            return MPIDI_IBMC_PROTO_ERROR(conn->rank, "an unknown packet type");
    }
  fn_fail:
    return mpi_errno;
}

int MPIDI_IBMC_recv_completion(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc)
{
    int mpi_errno = MPI_SUCCESS;
    int idx = (int) MPIDI_IBMC_wr_index(wc->wr_id);

    if (wc->status != IBV_WC_SUCCESS)
        return MPIDI_IBMC_wc_error("RC receive", MPIDI_IBMC_peer_of_qpn(st, wc->qp_num), wc);
    /* read who sent what before the buffer is posted again.  Every RC packet
     * carries its sender's rank as immediate data, and it must be the rank
     * this QP is connected to: a peer cannot speak for another. */
    const ibmc_pkt_hdr_t *h = (const ibmc_pkt_hdr_t *) MPIDI_IBMC_rbuf_addr(st, idx);
    uint32_t src = (wc->wc_flags & IBV_WC_WITH_IMM) ? be32toh(wc->imm_data) : UINT32_MAX;
    if (src >= (uint32_t) st->world_size || !st->conns[src].qp ||
        st->conns[src].qp->qp_num != wc->qp_num) {
        int peer = MPIDI_IBMC_peer_of_qpn(st, wc->qp_num);
        return MPIDI_IBMC_PROTO_ERROR(peer, "a packet whose sender rank is not "
                                      "the one its connection belongs to");
    }
    int type = wc->byte_len >= sizeof(*h) ? h->type : 0;
    int flags = wc->byte_len >= sizeof(*h) ? h->flags : 0;
    mpi_errno = MPIDI_IBMC_recv_packet(st, src, (const char *) h, wc->byte_len);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_IBMC_post_rbuf(st, idx);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_IBMC_credit_return(st, src, type, flags);
  fn_fail:
    return mpi_errno;
}
