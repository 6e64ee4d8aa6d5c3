/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L5, multicast glue: device (L5.1, the bottom of the glue).  Below:
 * the netmod's lower layers (../ibmc_types.h state, verbs, pvars, the
 * IPoIB lookup).  Above: group (L5.2), setup (L5.3), the receive path and
 * io (L5.4), bcast and finalize (L5.5); nothing here calls them.
 *
 * The process's multicast queue pair (ibmc_mcast_impl.h): one UD QP with
 * its own completion queues and receive pool, so that the RC path's
 * completion queue never sees multicast traffic; bound through rdma_cm to
 * the device and port the netmod already uses.  Receives posted to it,
 * sends posted to a joined group and reaped, and, at MPI_Finalize, the
 * device's resources freed (ibmc_mcast_finalize.c first leaves the groups
 * and releases the channels). */

#include <mpidimpl.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include "../ibmc_ipoib.h"
#include "../ibmc_types.h"
#include "ibmc_mcast_impl.h"

/* The send queue holds a window of packets, so that one flush can post a
 * whole window (ibmc_mcast_io.c), up to this many */
#define IBMC_MCAST_SQ_MAX 1024

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

void MPIDI_IBMC_mcast_device_init(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc)
{
    struct sockaddr_in sin;
    ibmc_verbs_err_t e;
    char why[160];

    mc->state = -1;
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

int MPIDI_IBMC_mcast_post_to_group(MPIDI_IBMC_mcast_t * mc, const MPIDI_IBMC_mcast_group_t * g,
                                   const void *buf, size_t len, uint32_t lkey,
                                   unsigned send_flags)
{
    struct ibv_sge sge = {.addr = (uintptr_t) buf,.length = (uint32_t) len,.lkey = lkey };
    struct ibv_send_wr wr, *bad;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = 1;               /* the one send its completion stands for */
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED | send_flags;
    wr.wr.ud.ah = g->ah;
    wr.wr.ud.remote_qpn = 0xffffff;     /* the multicast QPN */
    wr.wr.ud.remote_qkey = g->qkey;
    int rc = ibv_post_send(mc->qp, &wr, &bad);
    if (!rc)
        mc->sq_inflight++;
    return rc;
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

void MPIDI_IBMC_mcast_device_free(MPIDI_IBMC_mcast_t * mc)
{
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
    mc->state = -1;
}
