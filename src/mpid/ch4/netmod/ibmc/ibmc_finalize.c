/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* What MPI_Finalize does over RC before PMI's barrier: deliver what this
 * process still owes its peers, then meet every other process in a
 * barrier that keeps the progress engine running (ibmc_finbar.h says why
 * PMI's cannot), then drop the multicast channel's messages nobody needs
 * any more.  After that, nothing this process sends depends on a peer
 * polling, and PMI's barrier only orders the teardown of queue pairs. */

#include <math.h>
#include <mpidimpl.h>
#include "ibmc_types.h"
#include "ibmc_finalize.h"
#include "ibmc_sendq.h"

/* The first peer with sends or READs not yet completed, or -1. */
static int peer_pending(MPIDI_IBMC_state_t * st)
{
    for (int i = 0; i < st->world_size; i++) {
        if (st->conns[i].q_head || st->conns[i].rd_head || st->conns[i].sq_inflight ||
            st->conns[i].need_rtu || st->conns[i].inv_head)
            return i;
    }
    return -1;
}

/* Everything sent must have reached its peer before the QPs go away.  A
 * peer that takes nothing for MPIR_CVAR_IBMC_CONNECT_TIMEOUT seconds (its
 * QP would have failed long before, unless it stopped reposting buffers)
 * ends the wait with an error naming it, not a hang. */
int MPIDI_IBMC_fin_drain(MPIDI_IBMC_state_t * st)
{
    int mpi_errno = MPI_SUCCESS, peer;
    if (!st->conns)
        return MPI_SUCCESS;
    double deadline = MPIDI_IBMC_now() + MPIR_CVAR_IBMC_CONNECT_TIMEOUT;
    while ((peer = peer_pending(st)) >= 0) {
        mpi_errno = MPIDI_IBMC_progress_poll(0, 0);
        MPIR_ERR_CHECK(mpi_errno);
        if (MPIDI_IBMC_now() > deadline) {
            MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**ibmc_drain", "**ibmc_drain %d %d",
                                 peer, MPIR_CVAR_IBMC_CONNECT_TIMEOUT);
        }
    }
  fn_fail:
    return mpi_errno;
}

int MPIDI_IBMC_fin_barrier(MPIDI_IBMC_state_t * st)
{
    int mpi_errno = MPI_SUCCESS;
    ibmc_finbar_t *b = &st->finbar;
    int to, round;

    if (!st->conns)
        return MPI_SUCCESS;
    /* As long as PMI's barrier would: a process may reach MPI_Finalize
     * minutes after the others (writing results, say), and a connection
     * the barrier needs to it is asked for again every few seconds, not
     * given up after MPIR_CVAR_IBMC_CONNECT_TIMEOUT.  A process that died
     * instead is the process manager's to report, as it is for PMI's. */
    st->cm_timing.timeout = HUGE_VAL;
    while (!ibmc_finbar_advance(b)) {
        if (ibmc_finbar_due(b, &to, &round)) {
            ibmc_fin_t f = {.round = (uint32_t) round };
            mpi_errno = MPIDI_IBMC_send_ctrl(st, &st->conns[to], IBMC_PKT_FIN, 0, NULL, 0, &f,
                                             (MPI_Aint) sizeof(f), 0, 0, 0, NULL, NULL);
            MPIR_ERR_CHECK(mpi_errno);
            ibmc_finbar_sent(b);
            continue;
        }
        mpi_errno = MPIDI_IBMC_progress_poll(0, 0);
        MPIR_ERR_CHECK(mpi_errno);
    }
  fn_fail:
    return mpi_errno;
}

int MPIDI_IBMC_fin_settle(MPIDI_IBMC_state_t * st)
{
    if (!st->conns)
        return MPI_SUCCESS;
    /* Every root served its retiring channels before the barrier, so a
     * question, answer or repair still queued, behind a handshake or for
     * credits, is needed by nobody, and its receiver, past the barrier
     * too, may no longer poll to take it. */
    for (int i = 0; i < st->world_size; i++)
        st->fin_mcast_dropped += MPIDI_IBMC_send_forget(&st->conns[i], IBMC_PKT_MCAST);
    /* What is left is mostly in the send queues, awaiting the HCAs'
     * acknowledgements.  A barrier message may still be queued behind a
     * handshake or for credits: its receiver needs it to leave the
     * barrier, so it polls until it takes it. */
    return MPIDI_IBMC_fin_drain(st);
}
