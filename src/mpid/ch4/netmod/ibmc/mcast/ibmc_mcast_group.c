/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L5, multicast glue: group (L5.2).  Below: device (the probe's post
 * to the group; its QP and rdma_cm id, which the joins use), the
 * netmod's lower layers (the wait turn of ../ibmc_util.h, the clock).  Above:
 * setup (L5.3) joins and probes; the receive path (L5.4) drains rdma_cm
 * events; finalize (L5.5) leaves the groups.
 *
 * Multicast groups (ibmc_mcast_impl.h): joined through rdma_cm on the device
 * and port the netmod already uses (the subnet manager on InfiniBand, an IP
 * multicast join on RoCE) when a communicator's first multicast broadcast
 * needs one, shared by communicators through the pool (ibmc_mcast_pool.h)
 * and kept until MPI_Finalize; and the routing probe that checks a joined
 * group reaches every member before first use. */

#include <mpidimpl.h>
#include <arpa/inet.h>
#include "../ibmc_types.h"
#include "../ibmc_util.h"
#include "ibmc_mcast_impl.h"

/* rdma_cm events: joins completing or failing.  An event's context is the
 * number of the join it answers, never a pointer: a group may have been
 * left, and joined again, before its join's answer comes. */
void MPIDI_IBMC_mcast_drain_cm_events(MPIDI_IBMC_mcast_t * mc)
{
    struct rdma_cm_event *ev;
    while (mc->evch && rdma_get_cm_event(mc->evch, &ev) == 0) {
        MPIDI_IBMC_mcast_group_t *g = NULL;
        uintptr_t join_id = (uintptr_t) ev->param.ud.private_data;
        for (int k = 0; k < mc->pool.cap; k++)
            if (mc->groups[k].joined && mc->groups[k].join_id == join_id)
                g = &mc->groups[k];
        if (g && g->join_state == 0) {
            if (ev->event == RDMA_CM_EVENT_MULTICAST_JOIN) {
                g->join_state = 1;
                g->mgid = ev->param.ud.ah_attr.grh.dgid;
                g->mlid = ev->param.ud.ah_attr.dlid;
                g->qkey = ev->param.ud.qkey;
                struct ibv_ah_attr ah = ev->param.ud.ah_attr;
                g->ah = ibv_create_ah(mc->qp->pd, &ah);
                if (!g->ah) {
                    g->join_state = -1;
                    snprintf(g->why, sizeof(g->why), "ibv_create_ah for the group failed");
                }
            } else {
                g->join_state = -1;
                snprintf(g->why, sizeof(g->why), "joining multicast group %s: %s (status %d)",
                         inet_ntoa(g->maddr.sin_addr), rdma_event_str(ev->event), ev->status);
            }
            mc->joins_pending--;
        }
        rdma_ack_cm_event(ev);
    }
}

/* Leave entry k's group: at MPI_Finalize; after a failed join, so that a
 * later communicator may try again; or to give the idle entry to another
 * group (ibmc_mcast_pool.h, SWAP). */
void MPIDI_IBMC_mcast_group_leave(MPIDI_IBMC_mcast_t * mc, int k)
{
    MPIDI_IBMC_mcast_group_t *g = &mc->groups[k];
    if (g->attached)
        ibv_detach_mcast(mc->qp, &g->mgid, g->mlid);
    if (g->ah)
        ibv_destroy_ah(g->ah);
    if (g->joined) {
        if (g->join_state == 0)
            mc->joins_pending--;
        rdma_leave_multicast(mc->id, (struct sockaddr *) &g->maddr);
        if (g->counted)
            MPIDI_IBMC_pvars.mcast.groups--;
    }
    memset(g, 0, sizeof(*g));
}

/* The address of the job's group number addr (ibmc_mcast_pool_addr):
 * 239.x.y.z, its low 23 bits the job's base, from the job key, plus addr.
 * Within a job, groups up to 2^23 (leaders below 131,072) get addresses of
 * their own; 23 bits, since RoCE maps an IPv4 group to an Ethernet address
 * by its low 23 bits, so that two of them never share a MAC filter.
 * Another job's groups lie elsewhere, or overlap by chance; each job then
 * drops the other's packets as foreign (the job key in every header). */
static void group_address(MPIDI_IBMC_state_t * st, uint32_t addr, struct sockaddr_in *sin)
{
    uint64_t h = st->job_key;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 32;
    memset(sin, 0, sizeof(*sin));
    sin->sin_family = AF_INET;
    sin->sin_addr.s_addr = htonl(0xef000000u | (uint32_t) ((h + addr) & 0x7fffff));
}

/* No channel uses entry k's group any more: its QP stops taking the
 * group's packets (another communicator of the same leader may still send
 * there), while the process stays a member for the next channel, at no
 * subnet-manager transaction.  Attaching and detaching are the HCA's
 * business alone. */
void MPIDI_IBMC_mcast_group_detach(MPIDI_IBMC_mcast_t * mc, int k)
{
    MPIDI_IBMC_mcast_group_t *g = &mc->groups[k];
    if (g->attached && !ibv_detach_mcast(mc->qp, &g->mgid, g->mlid))
        g->attached = 0;
}

/* Make pool entry k a member of the job's group addr, joining it unless
 * it is already; returns 0, or -1 with why (the entry is left then).  The
 * QP takes the group's packets only once attached
 * (MPIDI_IBMC_mcast_group_attach), when every member has agreed on it. */
int MPIDI_IBMC_mcast_group_join(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc, int k,
                                uint32_t addr, char *why, size_t whylen)
{
    MPIDI_IBMC_mcast_group_t *g = &mc->groups[k];
    if (g->join_state == 1)
        return 0;
    if (!g->joined) {
        group_address(st, addr, &g->maddr);
        g->join_id = ++mc->joins;
        if (rdma_join_multicast(mc->id, (struct sockaddr *) &g->maddr, (void *) g->join_id)) {
            char ebuf[96];
            snprintf(why, whylen, "rdma_join_multicast(%s) failed: %s",
                     inet_ntoa(g->maddr.sin_addr), MPIR_Strerror(errno, ebuf, sizeof(ebuf)));
            memset(g, 0, sizeof(*g));
            return -1;
        }
        g->joined = 1;
        mc->joins_pending++;
    }
    double deadline = MPIDI_IBMC_now() + MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT;
    while (g->join_state == 0) {
        MPIDI_IBMC_mcast_drain_cm_events(mc);
        if (g->join_state)
            break;
        if (MPIDI_IBMC_now() > deadline) {
            snprintf(why, whylen, "joining multicast group %s took more than %d s "
                     "(MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT)", inet_ntoa(g->maddr.sin_addr),
                     MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT);
            MPIDI_IBMC_mcast_group_leave(mc, k);
            return -1;
        }
        MPIDI_IBMC_wait_turn();
    }
    if (g->join_state < 0) {
        snprintf(why, whylen, "%s", g->why);
        MPIDI_IBMC_mcast_group_leave(mc, k);
        return -1;
    }
    if (!g->counted) {
        g->counted = 1;
        MPIDI_IBMC_pvars.mcast.groups++;
    }
    if (g->qkey != RDMA_UDP_QKEY) {
        snprintf(why, whylen, "the group's Q_Key is %#x, not rdma_cm's %#x", g->qkey,
                 RDMA_UDP_QKEY);
        MPIDI_IBMC_mcast_group_leave(mc, k);
        return -1;
    }
    return 0;
}

/* The QP takes entry k's group's packets (joined, MPIDI_IBMC_mcast_group_join);
 * returns 0, or -1 with why. */
int MPIDI_IBMC_mcast_group_attach(MPIDI_IBMC_mcast_t * mc, int k, char *why, size_t whylen)
{
    MPIDI_IBMC_mcast_group_t *g = &mc->groups[k];
    if (g->attached)
        return 0;
    int rc = ibv_attach_mcast(mc->qp, &g->mgid, g->mlid);
    if (rc) {
        char ebuf[96];
        snprintf(why, whylen, "ibv_attach_mcast failed: %s", MPIR_Strerror(rc, ebuf, sizeof(ebuf)));
        return -1;
    }
    g->attached = 1;
    return 0;
}

/* The routing probe, before first use (MVAPICH2's MCST_INIT handshake): rank
 * 0 multicasts a probe, again after the NAK timeout and doubling, until every
 * member has acknowledged it over RC; every other member waits for it.  A
 * join can succeed on a fabric that then does not deliver (a switch that
 * snoops IGMP with no querier, a path the subnet manager did not program);
 * the probe finds that before a broadcast does, and the members fall back
 * together.  *routed: rank 0 heard from all, or this member got the probe,
 * within MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT. */
int MPIDI_IBMC_mcast_probe_group(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc,
                                 MPIDI_IBMC_mcast_chan_t * c, int *routed)
{
    MPIDI_IBMC_mcast_group_t *g = &mc->groups[c->group];
    double now = MPIDI_IBMC_now(), deadline = now + MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT;
    double next = now, every = ibmc_mcast_chan_nak_timeout(&c->ch);
    *routed = 0;
    for (;;) {
        if (ibmc_mcast_chan_probe_done(&c->ch)) {
            *routed = 1;
            return MPI_SUCCESS;
        }
        if (now > deadline)
            return MPI_SUCCESS;
        if (c->ch.rank == 0 && now >= next && mc->sq_inflight < mc->sq_depth) {
            ibmc_mcast_hdr_t h = {.magic = IBMC_MCAST_MAGIC,.version = IBMC_MCAST_VERSION,
                .type = IBMC_MCAST_PROBE,.context_id = c->ch.context_id,.epoch = c->ch.epoch,
                .job_key = st->job_key
            };
            memcpy(mc->probe_pkt, &h, sizeof(h));
            int rc = MPIDI_IBMC_mcast_post_to_group(mc, g, mc->probe_pkt, sizeof(h), mc->rmr->lkey,
                                                     0);
            if (rc)
                return MPIDI_IBMC_VERBS_ERROR("ibv_post_send(multicast probe)", rc);
            next = now + every;
            every = MPL_MIN(2 * every, mc->eng.params.nak_max_us * 1e-6);
        }
        int mpi_errno = MPIDI_IBMC_wait_turn();
        if (mpi_errno)
            return mpi_errno;
        now = MPIDI_IBMC_now();
    }
}
