/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The process's multicast queue pair (ibmc_mcast_impl.h): one UD QP with
 * its own completion queue and receive pool, so that the RC path's
 * completion queue never sees multicast traffic; bound through rdma_cm to
 * the device and port the netmod already uses.  Every receive path ends
 * here before the engine: a multicast packet's channel and sender come
 * from its header's identity and from the completion's source QP and GID,
 * an RC message's from its header and its connection; anything that matches
 * no live channel and member is dropped and counted (ibmc_mcast_dropped). */

#include <mpidimpl.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include "../ibmc_ipoib.h"
#include "../ibmc_types.h"
#include "ibmc_mcast_impl.h"

/* The send queue holds a window of packets, so that one flush can post a
 * whole window (ibmc_mcast_io.c), up to this many */
#define IBMC_MCAST_SQ_MAX 1024
#define IBMC_MCAST_POLL 16
/* the longest NAK timeout, probe and laggard-probe interval */
#define IBMC_MCAST_NAK_MAX_US 100000
/* Idle turns of a broadcast between clock reads, where the progress engine
 * does not yield.  Such a turn polls the queues and returns in about a
 * microsecond, so the NAK timer (200 us at first) and the root's question
 * act at most some 16 us late; a clock that is a system call (a guest on
 * HPET) is read 16 times less often.  Where a turn yields, it already
 * costs a system call and may last a scheduling slice, and the clock is
 * read every turn (params.clock_every): with MPIR_CVAR_IBMC_PROGRESS_YIELD
 * in force, and under MPI_THREAD_MULTIPLE, where each wait turn yields
 * MPICH's critical section to other threads. */
#define IBMC_MCAST_CLOCK_EVERY 16

static uint32_t mtu_bytes(enum ibv_mtu m)
{
    return 128u << (m < IBV_MTU_256 ? 0 : m);
}

int MPIDI_IBMC_mcast_post_recv(MPIDI_IBMC_mcast_t * mc, int idx)
{
    struct ibv_sge sge = {
        .addr = (uintptr_t) (mc->rbufs + (size_t) idx * mc->rbuf_sz),
        .length = (uint32_t) mc->rbuf_sz,
        .lkey = mc->rmr->lkey
    };
    struct ibv_recv_wr wr = {.wr_id = (uint64_t) idx,.sg_list = &sge,.num_sge = 1 }, *bad;
    return ibv_post_recv(mc->qp, &wr, &bad);
}

/* The IPv4 address rdma_cm binds to: the one the RoCE GID in use maps, or,

 * on InfiniBand, that of an IPoIB interface of the port. */
static int local_ipv4(MPIDI_IBMC_state_t * st, struct sockaddr_in *sin, char *why, size_t len)
{
    const uint8_t *g = st->hca.gid.raw;
    static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    memset(sin, 0, sizeof(*sin));
    sin->sin_family = AF_INET;
    if (st->hca.link_layer == IBV_LINK_LAYER_INFINIBAND) {
        if (ibmc_ipoib_ipv4(g, &sin->sin_addr) == 0)
            return 0;
        snprintf(why, len, "%s port %d has no IPoIB interface with an IPv4 address, which "
                 "rdma_cm needs to join multicast groups on InfiniBand", st->hca_name,
                 st->hca.port);
        return -1;
    }
    if (!memcmp(g, v4mapped, sizeof(v4mapped))) {
        memcpy(&sin->sin_addr, g + 12, 4);
        return 0;
    }
    snprintf(why, len, "GID %d of %s port %d maps no IPv4 address for rdma_cm (multicast needs "
             "a RoCE v2 IPv4 GID, see MPIR_CVAR_IBMC_GID_INDEX)", st->hca.gid_index,
             st->hca_name, st->hca.port);
    return -1;
}

static void qp_fail(MPIDI_IBMC_mcast_t * mc, const char *call, int err)
{
    char ebuf[96];
    mc->state = -1;
    snprintf(mc->why, sizeof(mc->why), "%s failed: %s", call,
             MPIR_Strerror(err ? err : EIO, ebuf, sizeof(ebuf)));
}

/* Sets mc->state to 1, or to -1 with mc->why. */
static void qp_init(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc)
{
    struct sockaddr_in sin;
    ibmc_verbs_err_t e;
    char why[160];

    mc->state = -1;
    ibmc_mcast_pool_init(&mc->pool, MPIR_CVAR_IBMC_MCAST_GROUPS);
    ibmc_mcast_faults_parse(MPIR_CVAR_IBMC_MCAST_FAULTS, &mc->fault_spec, why, sizeof(why));
    ibmc_mcast_faults_init(&mc->faults, &mc->fault_spec, (uint64_t) st->my_rank + 1);
    if (local_ipv4(st, &sin, mc->why, sizeof(mc->why)))
        return;
    mc->evch = rdma_create_event_channel();
    if (!mc->evch)
        return qp_fail(mc, "rdma_create_event_channel", errno);
    int fl = fcntl(mc->evch->fd, F_GETFL);
    if (fl < 0 || fcntl(mc->evch->fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return qp_fail(mc, "fcntl(O_NONBLOCK) on the rdma_cm event channel", errno);
    if (rdma_create_id(mc->evch, &mc->id, mc, RDMA_PS_UDP))
        return qp_fail(mc, "rdma_create_id", errno);
    if (rdma_bind_addr(mc->id, (struct sockaddr *) &sin)) {
        char a[INET_ADDRSTRLEN];
        snprintf(why, sizeof(why), "rdma_bind_addr(%s)",
                 inet_ntop(AF_INET, &sin.sin_addr, a, sizeof(a)));
        return qp_fail(mc, why, errno);
    }
    if (!mc->id->verbs ||
        strcmp(ibv_get_device_name(mc->id->verbs->device), ibv_get_device_name(st->hca.ctx->device))) {
        snprintf(mc->why, sizeof(mc->why), "rdma_cm bound the port's address to device %s, "
                 "not %s", mc->id->verbs ? ibv_get_device_name(mc->id->verbs->device) : "(none)",
                 st->hca_name);
        return;
    }

    mc->mtu = mtu_bytes(st->hca.active_mtu);
    mc->payload_max = mc->mtu - (uint32_t) sizeof(ibmc_mcast_hdr_t);
    if (MPIDI_IBMC_global.eager_limit < (MPI_Aint) (sizeof(ibmc_mcast_rc_t) + mc->mtu)) {
        snprintf(mc->why, sizeof(mc->why), "an RC packet (MPIR_CVAR_IBMC_PACKET_SIZE) cannot "
                 "carry a retransmitted %u-byte multicast packet", mc->mtu);
        return;
    }
    mc->rbuf_sz = IBMC_GRH_BYTES + mc->mtu;
    mc->n_rbufs = MPL_MIN(MPIR_CVAR_IBMC_MCAST_RECV_BUFFERS, st->hca.dev_attr.max_qp_wr);
    mc->sq_depth = MPL_MIN(MPL_MIN(MPIR_CVAR_IBMC_MCAST_WINDOW, IBMC_MCAST_SQ_MAX),
                           st->hca.dev_attr.max_qp_wr);
    mc->pending_wr = MPL_calloc(mc->sq_depth, sizeof(*mc->pending_wr), MPL_MEM_OTHER);
    mc->pending_sge = MPL_calloc(mc->sq_depth, sizeof(*mc->pending_sge), MPL_MEM_OTHER);
    if (!mc->pending_wr || !mc->pending_sge)
        return qp_fail(mc, "allocating the multicast send list", ENOMEM);
    mc->cq = ibv_create_cq(st->hca.ctx, mc->n_rbufs + 16, NULL, NULL, 0);
    if (!mc->cq)
        return qp_fail(mc, "ibv_create_cq(multicast)", errno);
    /* sends complete on a queue of their own, so that a root short of send
     * queue room can reap them without taking receives (ibmc_mcast_io.c) */
    mc->scq = ibv_create_cq(st->hca.ctx, mc->sq_depth + 16, NULL, NULL, 0);
    if (!mc->scq)
        return qp_fail(mc, "ibv_create_cq(multicast sends)", errno);
    int self_blocked;
    if (ibmc_verbs_create_mcast_qp(&st->hca, mc->scq, mc->cq, RDMA_UDP_QKEY, mc->sq_depth,
                                   mc->n_rbufs, &mc->qp, &mc->max_inline, &self_blocked, &e))
        return qp_fail(mc, e.call, e.err);
    MPIDI_IBMC_pvars.mcast.loopback_blocked = (unsigned long long) self_blocked;
    /* one more buffer past the receive ones: the routing probe is sent from it */
    size_t sz = mc->rbuf_sz * ((size_t) mc->n_rbufs + 1);
    mc->rbufs = MPL_aligned_alloc(4096, sz, MPL_MEM_BUFFER);
    if (!mc->rbufs)
        return qp_fail(mc, "allocating multicast receive buffers", ENOMEM);
    mc->rmeta = MPL_calloc(mc->n_rbufs, sizeof(*mc->rmeta), MPL_MEM_OTHER);
    if (!mc->rmeta)
        return qp_fail(mc, "allocating multicast receive buffers", ENOMEM);
    mc->rmr = ibv_reg_mr(st->hca.pd, mc->rbufs, sz, IBV_ACCESS_LOCAL_WRITE);
    if (!mc->rmr)
        return qp_fail(mc, "ibv_reg_mr(multicast receive buffers)", errno);
    mc->probe_pkt = mc->rbufs + mc->rbuf_sz * (size_t) mc->n_rbufs;
    for (int i = 0; i < mc->n_rbufs; i++) {
        int rc = MPIDI_IBMC_mcast_post_recv(mc, i);
        if (rc)
            return qp_fail(mc, "ibv_post_recv(multicast)", rc);
    }
    mc->state = 1;
}

/* The process's multicast side, made on first use. */
MPIDI_IBMC_mcast_t *MPIDI_IBMC_mcast_get(MPIDI_IBMC_state_t * st)
{
    if (!st->mcast) {
        MPIDI_IBMC_mcast_t *mc = MPL_calloc(1, sizeof(MPIDI_IBMC_mcast_t), MPL_MEM_OTHER);
        if (!mc)
            return NULL;
        ibmc_mcast_params_t params = {
            .window = (uint32_t) MPIR_CVAR_IBMC_MCAST_WINDOW,
            .ack_every = (uint32_t) MPIR_CVAR_IBMC_MCAST_ACK_EVERY,
            .subgroup = MPIR_CVAR_IBMC_MCAST_SUBGROUP,
            .nak_timeout_us = (uint32_t) MPIR_CVAR_IBMC_MCAST_NAK_TIMEOUT,
            .nak_max_us = IBMC_MCAST_NAK_MAX_US,
            .rdma_acks = MPIR_CVAR_IBMC_MCAST_RDMA_ACKS,
            .relay_on_loss = !MPIR_CVAR_IBMC_MCAST_COROOT_RELAY,
            .clock_every = st->yield || MPIR_ThreadInfo.isThreaded ? 1 : IBMC_MCAST_CLOCK_EVERY
        };
        ibmc_mcast_engine_init(&mc->eng, &MPIDI_IBMC_mcast_ops, st, &params,
                               &MPIDI_IBMC_pvars.mcast, &mc->faults);
        st->mcast = mc;
        qp_init(st, mc);
    }
    return st->mcast;
}

static MPIDI_IBMC_mcast_chan_t *find_chan(MPIDI_IBMC_mcast_t * mc, uint32_t context_id,
                                          uint32_t epoch)
{
    for (MPIDI_IBMC_mcast_chan_t * c = mc->chans; c; c = c->next)
        if (c->ch.context_id == context_id && c->ch.epoch == epoch &&
            (c->ch.state == IBMC_MCAST_CHAN_READY || c->ch.state == IBMC_MCAST_CHAN_RETIRING ||
             c->ch.state == IBMC_MCAST_CHAN_PROBING))
            return c;
    return NULL;
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
    if (c->ch.state == IBMC_MCAST_CHAN_READY && h->job_key == st->job_key)
        return MPI_SUCCESS;
    if (c->ch.state != IBMC_MCAST_CHAN_PROBING || c->ch.rank == 0 || h->magic != IBMC_MCAST_MAGIC ||
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
        MPIDI_IBMC_pvars.mcast.dropped++;
        return MPI_SUCCESS;
    }
    /* the source is the completion's queue pair and GID, never the header;
     * nearly every packet is the posted message's root's: try it first */
    const ibmc_mcast_rx_t *rx = &c->ch.rx;
    int src = rx->posted && c->qpn[rx->root] == src_qp ? rx->root : rank_of_qpn(c, src_qp);
    if (src >= 0 && sgid && memcmp(sgid->raw, st->cards[c->world[src]].gid, 16))
        src = -1;
    return ibmc_mcast_mcast_in(&c->ch, buf + IBMC_GRH_BYTES, len - IBMC_GRH_BYTES, src);
}

/* The sender's GID from the 40 bytes in front of a UD payload: a GRH
 * (InfiniBand, RoCE v1) or, for RoCE v2 over IPv4, 20 unused bytes and the
 * IPv4 header, whose source address maps to a GID. */
static int grh_source(const char *b, union ibv_gid *gid)
{
    const unsigned char *u = (const unsigned char *) b;
    if ((u[20] >> 4) == 4 && (u[20] & 0xf) == 5) {
        memset(gid, 0, sizeof(*gid));
        gid->raw[10] = gid->raw[11] = 0xff;
        memcpy(gid->raw + 12, u + 20 + 12, 4);
        return 0;
    }
    if ((u[0] >> 4) == 6) {
        memcpy(gid->raw, u + 8, 16);
        return 0;
    }
    return -1;
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
        !grh_source(mc->rbufs + (size_t) idx * mc->rbuf_sz, &sgid))
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

/* Completed multicast sends.  A signaled send completes every unsignaled
 * one posted before it: wr_id says how many (ibmc_mcast_io.c).  A failed
 * one is fatal, as every failed completion (ibmc_err.h): the QP is in error
 * and every later multicast of every communicator would be lost; it is
 * kept in send_err for the progress engine to report when the reaper
 * cannot. */
int MPIDI_IBMC_mcast_reap_sends(MPIDI_IBMC_mcast_t * mc, int *found)
{
    struct ibv_wc wc[IBMC_MCAST_POLL];
    int n = ibv_poll_cq(mc->scq, IBMC_MCAST_POLL, wc);
    *found = n > 0 ? n : 0;
    if (n < 0 && !mc->send_err)
        mc->send_err = MPIDI_IBMC_VERBS_ERROR("ibv_poll_cq(multicast sends)", EIO);
    for (int i = 0; i < n; i++) {
        mc->sq_inflight -= (int) wc[i].wr_id;
        MPIDI_IBMC_pvars.mcast.send_cqes++;
        if (wc[i].status != IBV_WC_SUCCESS && !mc->send_err)
            mc->send_err = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_FATAL, __func__,
                                                __LINE__, MPI_ERR_OTHER, "**ibmc_verbs",
                                                "**ibmc_verbs %s %s", "a multicast send",
                                                ibv_wc_status_str(wc[i].status));
    }
    return mc->send_err;
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
    int n = ibv_poll_cq(mc->cq, IBMC_MCAST_POLL, wc);
    if (n < 0)
        return MPIDI_IBMC_VERBS_ERROR("ibv_poll_cq(multicast)", EIO);
    *found = n + sent;
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
    /* ACKs written on the boards; retired channels go once every member has
     * all their packets */
    unsigned long long read = MPIDI_IBMC_pvars.mcast.acks_read;
    for (MPIDI_IBMC_mcast_chan_t * c = mc->chans, *next; c; c = next) {
        int release;
        next = c->next;
        mpi_errno = ibmc_mcast_chan_progress(&c->ch, &release);
        MPIR_ERR_CHECK(mpi_errno);
        if (release && mc->finalizing)
            c->kept = 1;
        else if (release)
            MPIDI_IBMC_mcast_chan_release(st, mc, c);
    }
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
     * process for its last ACK. */
    mc->finalizing = 1;
    for (;;) {
        int retiring = 0;
        for (MPIDI_IBMC_mcast_chan_t * c = mc->chans; c; c = c->next)
            retiring |= c->ch.state == IBMC_MCAST_CHAN_RETIRING && !c->kept;
        if (!retiring || mc->state != 1 || MPIDI_IBMC_progress_poll(0, 0) != MPI_SUCCESS)
            break;
    }
}

void MPIDI_IBMC_mcast_finalize(MPIDI_IBMC_state_t * st)
{
    MPIDI_IBMC_mcast_t *mc = st->mcast;
    if (!mc)
        return;
    while (mc->chans)
        MPIDI_IBMC_mcast_chan_release(st, mc, mc->chans);
    for (int k = 0; k < mc->pool.cap; k++)
        MPIDI_IBMC_mcast_group_leave(mc, k);
    if (mc->id)
        rdma_destroy_id(mc->id);
    if (mc->evch)
        rdma_destroy_event_channel(mc->evch);
    if (mc->qp)
        ibv_destroy_qp(mc->qp);
    if (mc->cq)
        ibv_destroy_cq(mc->cq);
    if (mc->scq)
        ibv_destroy_cq(mc->scq);
    if (mc->rmr)
        ibv_dereg_mr(mc->rmr);
    MPL_free(mc->rbufs);
    MPL_free(mc->rmeta);
    MPL_free(mc->pending_wr);
    MPL_free(mc->pending_sge);
    /* nothing but the boards is left, and nothing polls them */
    mc->state = -1;
    mc->finalized = 1;
    snprintf(mc->why, sizeof(mc->why), "MPI_Finalize has begun");
}

void MPIDI_IBMC_mcast_free(MPIDI_IBMC_state_t * st)
{
    MPIDI_IBMC_mcast_t *mc = st->mcast;
    if (!mc)
        return;
    while (mc->boards) {
        MPIDI_IBMC_mcast_boardmem_t *b = mc->boards;
        mc->boards = b->next;
        ibv_dereg_mr(b->mr);
        MPL_free(b->words);
        MPL_free(b);
        MPIDI_IBMC_pvars.mcast.boards--;
    }
    MPL_free(mc);
    st->mcast = NULL;
}
