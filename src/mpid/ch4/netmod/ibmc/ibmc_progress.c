/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The progress engine: drain the single completion queue, then service
 * connections that wait for a buffer or a handshake timer. */

#include <mpidimpl.h>
#include <sched.h>
#include "ibmc_types.h"
#include "ibmc_buffers.h"
#include "ibmc_cm_msg.h"
#include "mcast/ibmc_mcast.h"
#include "ibmc_nodeseg.h"
#include "ibmc_am_recv.h"
#include "ibmc_conn.h"
#include "ibmc_rndv.h"
#include "ibmc_sendq.h"
#include "ibmc_ud.h"

#define IBMC_POLL_BATCH 16

/* Dispatch a completion to its owner by the kind its work-request id
 * carries (ibmc_wr.h); the owner handles it, or words its error. */
static int handle_wc(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc)
{
    int mpi_errno = MPI_SUCCESS;

    switch (MPIDI_IBMC_wr_kind(wc->wr_id)) {
        case IBMC_WR_RC_SEND:
        case IBMC_WR_INLINE_WRITE:
            return MPIDI_IBMC_send_completion(st, wc);
        case IBMC_WR_RC_RECV:
            return MPIDI_IBMC_recv_completion(st, wc);
        case IBMC_WR_RDMA_READ:
        case IBMC_WR_MW_BIND:
        case IBMC_WR_MW_INV:
            return MPIDI_IBMC_rndv_completion(st, wc);
        case IBMC_WR_NODESEG:
            return MPIDI_IBMC_nodeseg_completion(st, wc);
        case IBMC_WR_UD_SEND:
            return MPIDI_IBMC_ud_send_completion(st, wc);
        case IBMC_WR_UD_RECV:{
                /* the datagram layer checks it, the connection manager acts on it */
                ibmc_cm_msg_t msg;
                int verdict;
                mpi_errno = MPIDI_IBMC_ud_recv(st, wc, &msg, &verdict);
                MPIR_ERR_CHECK(mpi_errno);
                if (verdict == IBMC_CM_MSG_OK) {
                    verdict = MPIDI_IBMC_conn_recv_cm(st, &msg, &mpi_errno);
                    MPIR_ERR_CHECK(mpi_errno);
                }
                if (verdict != IBMC_CM_MSG_OK)
                    MPIDI_IBMC_ud_dropped(st, verdict);
                break;
            }
        default:
            /* only this process posts on its queue pairs */
            MPIR_Assert(0);
    }
  fn_fail:
    return mpi_errno;
}

/* Walk the busy list: fire due handshake timers and push out queued sends.
 * Connections with nothing left to do leave the list. */
static int service_busy(MPIDI_IBMC_state_t * st)
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
            /* rendezvous' READs and window invalidations, then the send
             * queue (rendezvous sits above it and queues its own packets) */
            mpi_errno = MPIDI_IBMC_rndv_service(st, conn);
            if (!mpi_errno)
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
        mpi_errno = service_busy(st);
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
