/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L5, multicast glue: receive path (L5.4, beside io, which it does
 * not call).  Below: device (receives posted again, sends reaped), group
 * (rdma_cm events), setup (a retired channel's release), place (the
 * in-place receivers' completions, a GRH's source), the engine, the
 * netmod's lower layers.  Above: bcast and finalize (L5.5); the progress
 * engine (L7) polls it and the RC path (L6) hands it IBMC_PKT_MCAST
 * packets.  One call goes up: MPIDI_IBMC_mcast_serve_retiring, at
 * MPI_Finalize, turns the netmod's progress (L7) itself.
 *
 * Every receive path ends here before the engine: a multicast packet's
 * channel and sender come from its header's identity and from the
 * completion's source QP and GID, an RC message's from its header and its
 * connection; anything that matches no live channel and member is dropped
 * and counted (ibmc_mcast_dropped).  The poll also gives every channel its
 * turn (ACK boards, a root's questions) and releases the retired ones that
 * are done. */

#include <mpidimpl.h>
#include "../ibmc_types.h"
#include "../ibmc_util.h"
#include "ibmc_mcast_impl.h"

/* The channel of this identity that takes packets; with any = 1, also one
 * that does not (yet, or any more). */
static MPIDI_IBMC_mcast_chan_t *find_chan_in(MPIDI_IBMC_mcast_t * mc, uint32_t context_id,
                                             uint32_t epoch, int any)
{
    for (MPIDI_IBMC_mcast_chan_t * c = mc->chans; c; c = c->next)
        if (c->ch.context_id == context_id && c->ch.epoch == epoch &&
            (any || ibmc_mcast_chan_accepts(&c->ch)))
            return c;
    return NULL;
}

static MPIDI_IBMC_mcast_chan_t *find_chan(MPIDI_IBMC_mcast_t * mc, uint32_t context_id,
                                          uint32_t epoch)
{
    return find_chan_in(mc, context_id, epoch, 0);
}

/* The communicator rank of world rank w, or -1. */
static int rank_of_world(const MPIDI_IBMC_mcast_chan_t * c, int w)
{
    for (int r = 0; r < c->ch.size; r++)
        if (c->world[r] == w)
            return r;
    return -1;
}

static int rank_of_qpn(const MPIDI_IBMC_mcast_chan_t * c, uint32_t qpn)
{
    for (int r = 0; r < c->ch.size; r++)
        if (c->qpn[r] == qpn)
            return r;
    return -1;
}

/* A routing probe: believed only if it is this job's, of a channel being
 * probed, and sent from the multicast QP and address of the channel's rank
 * 0; then acknowledged to rank 0 over RC, once.  Copies that come after the
 * channel is in use are ignored. */
static int handle_probe(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_chan_t * c,
                        const ibmc_mcast_hdr_t * h, uint32_t src_qp, const union ibv_gid *sgid)
{
    if (ibmc_mcast_chan_is_ready(&c->ch) && h->job_key == st->job_key)
        return MPI_SUCCESS;
    if (!ibmc_mcast_chan_is_probing(&c->ch) || c->ch.rank == 0 || h->magic != IBMC_MCAST_MAGIC ||
        h->version != IBMC_MCAST_VERSION || h->job_key != st->job_key || h->payload_len ||
        c->qpn[0] != src_qp || (sgid && memcmp(sgid->raw, st->cards[c->world[0]].gid, 16))) {
        MPIDI_IBMC_pvars.mcast.dropped++;
        return MPI_SUCCESS;
    }
    return ibmc_mcast_probe_in(&c->ch);
}

static int handle_mcast(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc, int idx, uint32_t len,
                        uint32_t src_qp, const union ibv_gid *sgid)
{
    const char *buf = mc->rbufs + (size_t) idx * mc->rbuf_sz;
    ibmc_mcast_hdr_t h;
    if (len < IBMC_GRH_BYTES + sizeof(h)) {
        MPIDI_IBMC_pvars.mcast.dropped++;
        return MPI_SUCCESS;
    }
    memcpy(&h, buf + IBMC_GRH_BYTES, sizeof(h));
    MPIDI_IBMC_mcast_chan_t *c = find_chan(mc, h.context_id, h.epoch);
    if (c && h.type == IBMC_MCAST_PROBE)
        return handle_probe(st, c, &h, src_qp, sgid);
    if (!c) {
        /* another job's, or a communicator's this process is not in (or has
         * freed) that shares the group, or a sibling's (MPI_Comm_split gives
         * siblings one context id) where this process's own channel of that
         * identity fell back and so never takes a packet; a packet of one of
         * its own channels that takes nothing yet or any more (a routing
         * probe that came before this member began to wait for it, and
         * comes again, or after its set-up gave up) is only dropped */
        MPIDI_IBMC_mcast_chan_t *own = find_chan_in(mc, h.context_id, h.epoch, 1);
        MPIDI_IBMC_pvars.mcast.foreign += h.job_key != st->job_key || !own ||
            (ibmc_mcast_chan_is_failed(&own->ch) && h.type != IBMC_MCAST_PROBE);
        MPIDI_IBMC_pvars.mcast.dropped++;
        return MPI_SUCCESS;
    }
    /* the source is the completion's queue pair and GID, never the header;
     * nearly every packet is the posted message's root's: try it first */
    int root = ibmc_mcast_chan_posted_root(&c->ch);
    int src = root >= 0 && c->qpn[root] == src_qp ? root : rank_of_qpn(c, src_qp);
    if (src >= 0 && sgid && memcmp(sgid->raw, st->cards[c->world[src]].gid, 16))
        src = -1;
    return ibmc_mcast_mcast_in(&c->ch, buf + IBMC_GRH_BYTES, len - IBMC_GRH_BYTES, src);
}

/* One multicast receive completion through the fault injector. */
static int recv_completion(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc,
                           const struct ibv_wc *wc)
{
    int mpi_errno = MPI_SUCCESS;
    int idx = (int) wc->wr_id;
    union ibv_gid sgid;
    const union ibv_gid *pgid = NULL;
    if (wc->status == IBV_WC_SUCCESS && (wc->wc_flags & IBV_WC_GRH) &&
        !MPIDI_IBMC_mcast_grh_source(mc->rbufs + (size_t) idx * mc->rbuf_sz, &sgid))
        pgid = &sgid;
    /* a flushed receive: the QP is in the error state and would flush every
     * buffer posted again, so the poll would spin; fatal, as every failed
     * completion (ibmc_err.h) */
    if (wc->status == IBV_WC_WR_FLUSH_ERR)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_FATAL, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**ibmc_verbs", "**ibmc_verbs %s %s",
                                    "a multicast receive", ibv_wc_status_str(wc->status));
    /* another failed receive (a packet the device could not take), or this
     * process's own packet looped back (its QP number on its own GID: other
     * hosts reuse QP numbers).  A device loops a group's packets back to
     * every queue pair of the host attached to the group, the sender's own
     * included unless it took the QP's self-loopback block (ibmc_verbs.c),
     * so a root may receive what it sent: counted, dropped. */
    int echo = wc->status == IBV_WC_SUCCESS && wc->src_qp == mc->qp->qp_num &&
        (!pgid || !memcmp(pgid->raw, st->hca.gid.raw, 16));
    if (wc->status != IBV_WC_SUCCESS || echo) {
        MPIDI_IBMC_pvars.mcast.echoes += echo;
        return MPIDI_IBMC_mcast_post_recv(mc, idx) ?
            MPIDI_IBMC_VERBS_ERROR("ibv_post_recv(multicast)", EIO) : MPI_SUCCESS;
    }
    MPIDI_IBMC_pvars.mcast.pkts_recvd++;
    /* the fault injector may hold a buffer back: keep what its completion said */
    MPIDI_IBMC_mcast_rmeta_t *m = &mc->rmeta[idx];
    m->len = wc->byte_len;
    m->src_qp = wc->src_qp;
    m->has_gid = pgid != NULL;
    if (pgid)
        m->sgid = sgid;

    ibmc_mcast_fault_out_t out[3];
    int n = ibmc_mcast_faults_filter(&mc->faults, (void *) (intptr_t) (idx + 1), out);
    for (int i = 0; i < n; i++) {
        int j = (int) (intptr_t) out[i].item - 1;
        if (out[i].deliver) {
            const MPIDI_IBMC_mcast_rmeta_t *mj = &mc->rmeta[j];
            mpi_errno = handle_mcast(st, mc, j, mj->len, mj->src_qp, mj->has_gid ? &mj->sgid : NULL);
            MPIR_ERR_CHECK(mpi_errno);
        } else {
            MPIDI_IBMC_pvars.mcast.faults++;
        }
        if (out[i].release && MPIDI_IBMC_mcast_post_recv(mc, j)) {
            mpi_errno = MPIDI_IBMC_VERBS_ERROR("ibv_post_recv(multicast)", EIO);
            goto fn_fail;
        }
    }
  fn_fail:
    return mpi_errno;
}

int MPIDI_IBMC_mcast_poll(MPIDI_IBMC_state_t * st, int *found)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_IBMC_mcast_t *mc = st->mcast;
    struct ibv_wc wc[IBMC_MCAST_POLL];
    *found = 0;
    if (!mc || mc->state != 1)
        return MPI_SUCCESS;
    if (mc->joins_pending)
        MPIDI_IBMC_mcast_drain_cm_events(mc);
    int sent = 0;
    /* a process that is not a root has nothing on its send queue */
    if (mc->sq_inflight || mc->send_err) {
        mpi_errno = MPIDI_IBMC_mcast_reap_sends(mc, &sent);
        MPIR_ERR_CHECK(mpi_errno);
    }
    /* persistent broadcasts received in place first: the main queue's
     * twins of their fragments then find them delivered */
    int placed = 0;
    if (mc->places_armed) {
        mpi_errno = MPIDI_IBMC_mcast_place_poll(st, mc, &placed);
        MPIR_ERR_CHECK(mpi_errno);
    }
    int n = ibv_poll_cq(mc->cq, IBMC_MCAST_POLL, wc);
    if (n < 0)
        return MPIDI_IBMC_VERBS_ERROR("ibv_poll_cq(multicast)", EIO);
    *found = n + sent + placed;
    for (int i = 0; i < n; i++) {
        mpi_errno = recv_completion(st, mc, &wc[i]);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (n == 0) {
        /* nothing more came: a packet the injector held back goes now */
        ibmc_mcast_fault_out_t out[1];
        if (ibmc_mcast_faults_flush(&mc->faults, out)) {
            int j = (int) (intptr_t) out[0].item - 1;
            const MPIDI_IBMC_mcast_rmeta_t *m = &mc->rmeta[j];
            mpi_errno = handle_mcast(st, mc, j, m->len, m->src_qp, m->has_gid ? &m->sgid : NULL);
            MPIR_ERR_CHECK(mpi_errno);
            if (MPIDI_IBMC_mcast_post_recv(mc, j))
                return MPIDI_IBMC_VERBS_ERROR("ibv_post_recv(multicast)", EIO);
        }
    }
    /* posted broadcasts, ACKs written on the boards; retired channels go
     * once every member has all their packets.  A channel's turn may poll
     * again from inside (a receiver's last poll before a NAK): only the
     * outermost loop releases channels, so that none that it holds goes. */
    unsigned long long read = MPIDI_IBMC_pvars.mcast.acks_read;
    mc->chan_turns++;
    for (MPIDI_IBMC_mcast_chan_t * c = mc->chans, *next; c; c = next) {
        int release;
        next = c->next;
        mpi_errno = ibmc_mcast_chan_progress(&c->ch, &release);
        if (mpi_errno)
            break;
        if (release && mc->finalizing)
            c->kept = 1;
        else if (release && mc->chan_turns == 1)
            MPIDI_IBMC_mcast_chan_release(st, mc, c);
    }
    mc->chan_turns--;
    MPIR_ERR_CHECK(mpi_errno);
    /* an ACK read off a board is progress too: it may have opened a root's
     * window, and the root should send now rather than yield first */
    *found += (int) (MPIDI_IBMC_pvars.mcast.acks_read - read);
  fn_fail:
    return mpi_errno;
}

int MPIDI_IBMC_mcast_recv_rc(MPIDI_IBMC_state_t * st, int src, const char *payload, size_t plen)
{
    ibmc_mcast_rc_t h;
    MPIDI_IBMC_mcast_t *mc = st->mcast;
    if (plen < sizeof(h) || !mc || mc->state != 1) {
        MPIDI_IBMC_pvars.mcast.dropped++;
        return MPI_SUCCESS;
    }
    memcpy(&h, payload, sizeof(h));
    MPIDI_IBMC_mcast_chan_t *c = find_chan(mc, h.context_id, h.epoch);
    int from = c ? rank_of_world(c, src) : -1;
    if (from < 0) {
        /* a freed communicator's, or from a process outside it */
        MPIDI_IBMC_pvars.mcast.dropped++;
        return MPI_SUCCESS;
    }
    return ibmc_mcast_rc_in(&c->ch, from, &h, payload + sizeof(h), plen - sizeof(h));
}

void MPIDI_IBMC_mcast_serve_retiring(MPIDI_IBMC_state_t * st)
{
    MPIDI_IBMC_mcast_t *mc = st->mcast;
    if (!mc)
        return;
    /* Retiring channels may still be asked for packets by members that are
     * finishing their last broadcast: serve them until every member has
     * acknowledged everything, or the deadline.  A channel whose
     * communicator the application never freed has no such duty.  One
     * whose duty is done stays until the barrier after this
     * (ibmc_finalize.c): another root, still serving its own, may ask this
     * process for its last ACK.  The loop turns the netmod's progress
     * (L7), which polls this file: the glue's one call up the stack, kept
     * as it was (the wait turn of ../ibmc_util.c would instead run all of
     * MPICH's progress with the VCI lock released). */
    mc->finalizing = 1;
    for (;;) {
        int retiring = 0;
        for (MPIDI_IBMC_mcast_chan_t * c = mc->chans; c; c = c->next)
            retiring |= ibmc_mcast_chan_is_retiring(&c->ch) && !c->kept;
        if (!retiring || mc->state != 1 || MPIDI_IBMC_poll_turn(1) != MPI_SUCCESS)
            break;
    }
}
