/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The progress engine: drain the single completion queue, then service
 * connections that wait for a buffer or a handshake timer. */

#include <mpidimpl.h>
#include <endian.h>
#include <sched.h>
#include "ibmc_types.h"
#include "mcast/ibmc_mcast.h"
#include "ibmc_nodeseg.h"

#define IBMC_POLL_BATCH 16

static int find_peer_by_qpn(MPIDI_IBMC_state_t * st, uint32_t qpn)
{
    for (int i = 0; i < st->world_size; i++) {
        if (st->conns[i].qp && st->conns[i].qp->qp_num == qpn)
            return i;
    }
    return -1;
}

static int wc_error(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc)
{
    int kind = IBMC_WR_KIND(wc->wr_id);
    int idx = IBMC_WR_INDEX(wc->wr_id);
    int write = kind == IBMC_WR_RC_SEND && idx >= st->n_sbufs;
    int peer = write ? idx - st->n_sbufs : kind == IBMC_WR_RC_SEND ? st->sbufs[idx].peer :
        kind == IBMC_WR_RDMA_READ ? ((MPIDI_IBMC_rdma_read_t *) IBMC_WR_PTR(wc->wr_id))->peer :
        (kind == IBMC_WR_MW_BIND || kind == IBMC_WR_MW_INV) ?
        ((MPIDI_IBMC_rndv_send_t *) IBMC_WR_PTR(wc->wr_id))->peer :
        kind == IBMC_WR_NODESEG ? ((MPIDI_IBMC_nodeseg_target_t *) IBMC_WR_PTR(wc->wr_id))->world :
        find_peer_by_qpn(st, wc->qp_num);
    const char *what = write ? "multicast ACK write" : kind == IBMC_WR_RC_SEND ? "RC send" :
        kind == IBMC_WR_RC_RECV ? "RC receive" :
        kind == IBMC_WR_RDMA_READ ? "rendezvous RDMA READ" :
        kind == IBMC_WR_MW_BIND ? "rendezvous memory-window bind" :
        kind == IBMC_WR_MW_INV ? "rendezvous memory-window invalidation" :
        kind == IBMC_WR_NODESEG ? "node-segment RDMA write or read" :
        kind == IBMC_WR_UD_SEND ? "connection datagram send" : "connection datagram receive";
    /* fatal (see ibmc_err.h): the QP is in the error state and what was in
     * flight on it is lost */
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_FATAL, __func__, __LINE__,
                                MPI_ERR_OTHER, "**ibmc_wc", "**ibmc_wc %s %d %s", what, peer,
                                ibv_wc_status_str(wc->status));
}

static int handle_wc(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc)
{
    int mpi_errno = MPI_SUCCESS;
    int idx = IBMC_WR_INDEX(wc->wr_id);

    if (wc->status != IBV_WC_SUCCESS)
        return wc_error(st, wc);

    switch (IBMC_WR_KIND(wc->wr_id)) {
        case IBMC_WR_RC_SEND:{
                if (idx >= st->n_sbufs) {
                    st->conns[idx - st->n_sbufs].sq_inflight--;
                    break;
                }
                MPIDI_IBMC_conn_t *conn = &st->conns[st->sbufs[idx].peer];
                conn->sq_inflight--;
                MPIDI_IBMC_sbuf_release(st, idx);
                break;
            }
        case IBMC_WR_RC_RECV:{
                /* read who sent what before the buffer is posted again.  Every
                 * RC packet carries its sender's rank as immediate data, and it
                 * must be the rank this QP is connected to: a peer cannot speak
                 * for another. */
                const ibmc_pkt_hdr_t *h = (const ibmc_pkt_hdr_t *) MPIDI_IBMC_rbuf_addr(st, idx);
                uint32_t src = (wc->wc_flags & IBV_WC_WITH_IMM) ? be32toh(wc->imm_data) :
                    UINT32_MAX;
                if (src >= (uint32_t) st->world_size || !st->conns[src].qp ||
                    st->conns[src].qp->qp_num != wc->qp_num) {
                    int peer = find_peer_by_qpn(st, wc->qp_num);
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
                break;
            }
        case IBMC_WR_RDMA_READ:
            mpi_errno = MPIDI_IBMC_rndv_read_done(st, IBMC_WR_PTR(wc->wr_id));
            break;
        case IBMC_WR_MW_BIND:
        case IBMC_WR_MW_INV:
            mpi_errno = MPIDI_IBMC_rndv_mw_done(st, IBMC_WR_KIND(wc->wr_id),
                                                IBMC_WR_PTR(wc->wr_id));
            break;
        case IBMC_WR_NODESEG:
            MPIDI_IBMC_nodeseg_write_done(st, IBMC_WR_PTR(wc->wr_id));
            break;
        case IBMC_WR_UD_SEND:
            st->ud_sq_inflight--;
            break;
        case IBMC_WR_UD_RECV:
            mpi_errno = MPIDI_IBMC_ud_recv(st, wc, idx);
            break;
    }
  fn_fail:
    return mpi_errno;
}

static int poll_once(MPIDI_IBMC_state_t * st, int may_yield)
{
    int mpi_errno = MPI_SUCCESS;
    struct ibv_wc wc[IBMC_POLL_BATCH];

    if (!st || !st->conns)
        return MPI_SUCCESS;

    /* the multicast queue first: when a packet's multicast copy and its
     * retransmission on RC have both come, the copy is taken first and the
     * retransmission counts as a duplicate, so the NAK timeout learns that
     * it asked too early, not that a packet was lost (ibmc_mcast_engine.c) */
    int n_mcast = 0;
    if (st->mcast) {
        mpi_errno = MPIDI_IBMC_mcast_poll(st, &n_mcast);
        MPIR_ERR_CHECK(mpi_errno);
    }

    int n = ibv_poll_cq(st->hca.cq, IBMC_POLL_BATCH, wc);
    if (n < 0) {
        MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**ibmc_verbs", "**ibmc_verbs %s %s",
                             "ibv_poll_cq", "the completion queue is broken");
    }
    for (int i = 0; i < n; i++) {
        mpi_errno = handle_wc(st, &wc[i]);
        MPIR_ERR_CHECK(mpi_errno);
    }

    if (st->busy_head) {
        mpi_errno = MPIDI_IBMC_conn_service_busy(st);
        MPIR_ERR_CHECK(mpi_errno);
    }

    /* yield only after a poll that found nothing on either queue: a process
     * that has just received a broadcast's packet is about to return to the
     * application, and giving the core away then delays it a whole turn */
    if (n == 0 && n_mcast == 0 && st->yield && may_yield)
        sched_yield();

  fn_fail:
    return mpi_errno;
}

int MPIDI_IBMC_progress_poll(int vci, int blocking)
{
    return poll_once(MPIDI_IBMC_STATE(), 1);
}

int MPIDI_IBMC_progress_poll_noyield(void)
{
    return poll_once(MPIDI_IBMC_STATE(), 0);
}
