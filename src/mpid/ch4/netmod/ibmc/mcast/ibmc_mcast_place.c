/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L5, multicast glue: a persistent broadcast's in-place receiver
 * (L5.3, beside setup, which it does not call).  Below: device (the
 * multicast side's state), the verbs layer, the engine.  Above: the
 * receive path (L5.4) polls the armed receivers, io (L5.4) arms and
 * disarms them for the engine, bcast (L5.5) makes one for each
 * MPI_Bcast_init request and frees it with the request, finalize (L5.5)
 * takes every one's verbs resources before the device goes.
 *
 * A receiver is the request's buffer, registered once, and a UD queue
 * pair of its own attached to the channel's group, so that the device
 * hands it every packet of the group beside the process's main multicast
 * QP.  Its receive work requests are built once: the j-th scatters the
 * 40-byte GRH and the packet's header into the j-th slot of a small
 * registered scratch, and the payload straight to the j-th fragment's
 * place in the buffer (the last one's tail to an overflow, so that a
 * full-size packet that takes it completes rather than fails).  An
 * MPI_Start posts them all with one call; the completions come in order
 * of arrival and go to the engine (ibmc_mcast_placed_in), which takes
 * the j-th as fragment j if it is, moves a fragment that came behind a
 * stray packet to its place, and ends the in-place receive on a fragment
 * whose place a receive still posted may write (a loss before it): the QP
 * goes to the error state, which flushes what is still posted, so that
 * the device writes the buffer no more before the window copies the
 * rest; the next arm brings it back through RESET. */

#include <mpidimpl.h>
#include "../ibmc_types.h"
#include "../ibmc_util.h"
#include "ibmc_mcast_impl.h"

/* the GRH and the packet's header */
#define HDR_BYTES (IBMC_GRH_BYTES + sizeof(ibmc_mcast_hdr_t))

struct MPIDI_IBMC_mcast_place {
    struct MPIDI_IBMC_mcast_place *next;        /* in mc->places */
    MPIDI_IBMC_mcast_chan_t *chan;      /* armed: the channel it receives for */
    int armed;
    int dirty;                  /* flushed: back through RESET before the next arm */
    int broken;                 /* the device refused it once: copies from then on */
    int group;                  /* the pool entry its QP is attached to, or -1 */
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct ibv_mr *mr;          /* the buffer */
    char *scratch;              /* nfrags headers, one payload of overflow, one of bounce */
    struct ibv_mr *smr;
    char *buf;
    uint64_t len;
    uint32_t nfrags, payload_max;
    uint32_t posted, taken;     /* of this arm: receives posted, completions taken */
    uint32_t arms;              /* arms so far: a completion of an earlier one is stale */
    struct ibv_recv_wr *wr;     /* nfrags, chained: posted as one list */
    struct ibv_sge *sge;        /* 3 a work request */
    ibmc_mcast_faults_t faults; /* the test knob, on this queue's packets too */
};

int MPIDI_IBMC_mcast_grh_source(const char *b, union ibv_gid *gid)
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

static void release_verbs(MPIDI_IBMC_mcast_t * mc, MPIDI_IBMC_mcast_place_t * p)
{
    if (p->qp && p->group >= 0)
        ibv_detach_mcast(p->qp, &mc->groups[p->group].mgid, mc->groups[p->group].mlid);
    p->group = -1;
    if (p->qp)
        ibv_destroy_qp(p->qp);
    if (p->cq)
        ibv_destroy_cq(p->cq);
    if (p->mr)
        ibv_dereg_mr(p->mr);
    if (p->smr)
        ibv_dereg_mr(p->smr);
    p->qp = NULL;
    p->cq = NULL;
    p->mr = p->smr = NULL;
}

int MPIDI_IBMC_mcast_place_new(MPIDI_IBMC_state_t * st, void *buf, uint64_t len,
                               MPIDI_IBMC_mcast_place_t ** out, char *why, size_t whylen)
{
    MPIDI_IBMC_mcast_t *mc = st->mcast;
    ibmc_verbs_err_t e;
    *out = NULL;
    if (!mc || mc->state != 1 || len == 0) {
        snprintf(why, whylen, "the multicast channel is not set up");
        return -1;
    }
    uint64_t nfrags = (len + mc->payload_max - 1) / mc->payload_max;
    if (nfrags > (uint64_t) MPL_MIN(st->hca.dev_attr.max_qp_wr, st->hca.dev_attr.max_cqe - 1) ||
        st->hca.dev_attr.max_sge < 3 || st->hca.dev_attr.max_mcast_qp_attach < 2) {
        snprintf(why, whylen, "%" PRIu64 " fragments need as many receive work requests of 3 "
                 "entries on a second queue pair of the group, more than %s allows", nfrags,
                 st->hca_name);
        return -1;
    }
    MPIDI_IBMC_mcast_place_t *p = MPL_calloc(1, sizeof(*p), MPL_MEM_OTHER);
    if (!p) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    p->group = -1;
    p->buf = buf;
    p->len = len;
    p->nfrags = (uint32_t) nfrags;
    p->payload_max = mc->payload_max;
    size_t ssz = HDR_BYTES * (size_t) nfrags + 2 * (size_t) mc->payload_max;
    p->scratch = MPL_aligned_alloc(64, ssz, MPL_MEM_BUFFER);
    p->wr = MPL_calloc(nfrags, sizeof(*p->wr), MPL_MEM_OTHER);
    p->sge = MPL_calloc(nfrags * 3, sizeof(*p->sge), MPL_MEM_OTHER);
    if (!p->scratch || !p->wr || !p->sge) {
        snprintf(why, whylen, "out of memory");
        goto fail;
    }
    p->mr = ibv_reg_mr(st->hca.pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
    if (!p->mr) {
        char ebuf[96];
        snprintf(why, whylen, "ibv_reg_mr of the buffer failed: %s",
                 MPIR_Strerror(errno, ebuf, sizeof(ebuf)));
        goto fail;
    }
    p->smr = ibv_reg_mr(st->hca.pd, p->scratch, ssz, IBV_ACCESS_LOCAL_WRITE);
    p->cq = p->smr ? ibv_create_cq(st->hca.ctx, (int) nfrags + 1, NULL, NULL, 0) : NULL;
    if (!p->cq || ibmc_verbs_create_place_qp(&st->hca, p->cq, RDMA_UDP_QKEY, (int) nfrags, 3,
                                             &p->qp, &e)) {
        char ebuf[96];
        snprintf(why, whylen, "%s failed: %s",
                 !p->smr ? "ibv_reg_mr(scratch)" : !p->cq ? "ibv_create_cq" : e.call,
                 MPIR_Strerror(p->cq ? e.err : errno, ebuf, sizeof(ebuf)));
        goto fail;
    }
    for (uint32_t j = 0; j < p->nfrags; j++) {
        struct ibv_sge *s = &p->sge[3 * (size_t) j];
        uint64_t off = (uint64_t) j * p->payload_max;
        uint32_t flen = (uint32_t) MPL_MIN((uint64_t) p->payload_max, len - off);
        s[0].addr = (uintptr_t) (p->scratch + HDR_BYTES * (size_t) j);
        s[0].length = (uint32_t) HDR_BYTES;
        s[0].lkey = p->smr->lkey;
        s[1].addr = (uintptr_t) (p->buf + off);
        s[1].length = flen;
        s[1].lkey = p->mr->lkey;
        s[2].addr = (uintptr_t) (p->scratch + HDR_BYTES * (size_t) nfrags);
        s[2].length = p->payload_max - flen;
        s[2].lkey = p->smr->lkey;
        p->wr[j].wr_id = j;
        p->wr[j].sg_list = s;
        p->wr[j].num_sge = flen < p->payload_max ? 3 : 2;
        p->wr[j].next = j + 1 < p->nfrags ? &p->wr[j + 1] : NULL;
    }
    ibmc_mcast_faults_init(&p->faults, &mc->fault_spec, (uint64_t) st->my_rank + 1 + 0x9e37u);
    p->next = mc->places;
    mc->places = p;
    *out = p;
    return 0;
  fail:
    release_verbs(mc, p);
    MPL_free(p->scratch);
    MPL_free(p->wr);
    MPL_free(p->sge);
    MPL_free(p);
    return -1;
}

void MPIDI_IBMC_mcast_place_free(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_place_t * p)
{
    MPIDI_IBMC_mcast_t *mc = st->mcast;
    if (!p)
        return;
    /* MPI_Request_free of a request still running: its engine lets go */
    if (p->armed && p->chan)
        ibmc_mcast_place_end(&p->chan->ch);
    if (mc) {
        for (MPIDI_IBMC_mcast_place_t ** q = &mc->places; *q; q = &(*q)->next)
            if (*q == p) {
                *q = p->next;
                break;
            }
        release_verbs(mc, p);
    }
    MPL_free(p->scratch);
    MPL_free(p->wr);
    MPL_free(p->sge);
    MPL_free(p);
}

void MPIDI_IBMC_mcast_place_release_all(MPIDI_IBMC_mcast_t * mc)
{
    for (MPIDI_IBMC_mcast_place_t * p = mc->places; p; p = p->next) {
        p->armed = 0;
        p->chan = NULL;
        release_verbs(mc, p);
    }
    mc->places = NULL;
    mc->places_armed = 0;
}

static int drain(MPIDI_IBMC_mcast_place_t * p);

/* A receiver the device will not take any more (attach, restart or post
 * refused, say at a limit of QPs per group): its receives taken back, and
 * never armed again; its broadcasts are copied. */
static void place_broken(MPIDI_IBMC_mcast_place_t * p, const char *call, int err)
{
    ibmc_verbs_err_t e;
    p->broken = 1;
    MPIDI_IBMC_pvars.mcast.place_refused++;
    if (MPIR_CVAR_IBMC_STATS) {
        char ebuf[96];
        printf("ibmc-stats: an MPI_Bcast_init request's broadcasts of %lu bytes are copied "
               "from now on: %s failed: %s\n", (unsigned long) p->len, call,
               MPIR_Strerror(err, ebuf, sizeof(ebuf)));
        fflush(stdout);
    }
    if (p->qp && !ibmc_verbs_qp_to_error(p->qp, &e))
        p->dirty = 1;
}

int MPIDI_IBMC_mcast_place_arm(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_chan_t * c,
                               MPIDI_IBMC_mcast_place_t * p, void *buf, uint64_t len,
                               uint32_t nfrags, int *armed)
{
    MPIDI_IBMC_mcast_t *mc = st->mcast;
    ibmc_verbs_err_t e;
    struct ibv_recv_wr *bad;
    *armed = 0;
    /* another buffer or shape than the one registered (not the request's
     * broadcast), a receiver released by MPI_Finalize or broken, or one in
     * use */
    if (p->armed || p->broken || !p->qp || p->buf != buf || p->len != len ||
        p->nfrags != nfrags || p->payload_max != mc->payload_max || c->group < 0)
        return MPI_SUCCESS;
    if (p->dirty) {
        if (ibmc_verbs_ud_restart(&st->hca, p->qp, RDMA_UDP_QKEY, &e)) {
            place_broken(p, e.call, e.err);
            return MPI_SUCCESS;
        }
        p->dirty = 0;
    }
    if (p->group != c->group) {
        const MPIDI_IBMC_mcast_group_t *g;
        if (p->group >= 0) {
            g = &mc->groups[p->group];
            ibv_detach_mcast(p->qp, &g->mgid, g->mlid);
            p->group = -1;
        }
        g = &mc->groups[c->group];
        int rc = ibv_attach_mcast(p->qp, &g->mgid, g->mlid);
        if (rc) {
            place_broken(p, "ibv_attach_mcast(in-place receiver)", rc);
            return MPI_SUCCESS;
        }
        p->group = c->group;
    }
    int rc = ibv_post_recv(p->qp, &p->wr[0], &bad);
    if (rc) {
        /* the receives before bad are posted: the error state takes them
         * back, and the flush is drained at the next restart, never */
        p->posted = (uint32_t) (bad - p->wr);
        p->taken = 0;
        place_broken(p, "ibv_post_recv(in place)", rc);
        return drain(p);
    }
    MPIDI_IBMC_pvars.mcast.post_calls++;
    p->posted = nfrags;
    p->taken = 0;
    p->armed = 1;
    p->arms++;
    p->chan = c;
    mc->places_armed++;
    *armed = 1;
    return MPI_SUCCESS;
}

/* Every receive of this arm back (the QP in the error state): once all
 * are, the device writes the buffer no more. */
static int drain(MPIDI_IBMC_mcast_place_t * p)
{
    double deadline = MPIDI_IBMC_now() + 10.0;
    while (p->taken < p->posted) {
        struct ibv_wc wc[IBMC_MCAST_POLL];
        int n = ibv_poll_cq(p->cq, IBMC_MCAST_POLL, wc);
        if (n < 0)
            return MPIDI_IBMC_VERBS_ERROR("ibv_poll_cq(in place)", EIO);
        p->taken += (uint32_t) n;
        if (n == 0 && MPIDI_IBMC_now() > deadline)
            return MPIDI_IBMC_VERBS_ERROR("flushing the in-place receives", ETIMEDOUT);
    }
    return MPI_SUCCESS;
}

int MPIDI_IBMC_mcast_place_disarm(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_place_t * p)
{
    ibmc_verbs_err_t e;
    st->mcast->places_armed -= p->armed;
    p->armed = 0;
    p->chan = NULL;
    if (p->taken == p->posted || !p->qp)
        return MPI_SUCCESS;
    /* the error state flushes every receive still posted */
    if (ibmc_verbs_qp_to_error(p->qp, &e))
        return MPIDI_IBMC_VERBS_ERROR(e.call, e.err);
    p->dirty = 1;
    return drain(p);
}

/* One completion of an armed receiver, in order. */
static int place_completion(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc,
                            MPIDI_IBMC_mcast_place_t * p, const struct ibv_wc *wc)
{
    MPIDI_IBMC_mcast_chan_t *c = p->chan;
    uint32_t j = (uint32_t) wc->wr_id;
    int placed;
    MPIDI_IBMC_pvars.mcast.place_recvd += wc->status == IBV_WC_SUCCESS;
    if (wc->status != IBV_WC_SUCCESS || wc->byte_len < HDR_BYTES || j >= p->nfrags)
        return ibmc_mcast_place_end(&c->ch);
    if (mc->fault_spec.enabled) {
        /* a packet the injector would not hand over at once, whole and
         * alone, is lost to this queue (its twin meets the main queue's
         * injector) */
        ibmc_mcast_fault_out_t out[3];
        int n = ibmc_mcast_faults_filter(&p->faults, p, out);
        if (n != 1 || !out[0].deliver) {
            MPIDI_IBMC_pvars.mcast.faults++;
            return ibmc_mcast_place_end(&c->ch);
        }
    }
    const char *h = p->scratch + HDR_BYTES * (size_t) j;
    union ibv_gid sgid;
    int root = ibmc_mcast_chan_posted_root(&c->ch);
    int src = root >= 0 && c->qpn[root] == wc->src_qp ? root : -1;
    /* the main path's rule (ibmc_mcast_recv.c): a GID that can be read
     * must be the root's */
    if (src >= 0 && (wc->wc_flags & IBV_WC_GRH) && !MPIDI_IBMC_mcast_grh_source(h, &sgid) &&
        memcmp(sgid.raw, st->cards[c->world[src]].gid, 16))
        src = -1;
    /* a packet longer than the last fragment that took the last receive
     * (a fragment behind a stray, or another packet): its payload is at
     * the last place and in the overflow, and goes to the engine whole */
    const struct ibv_sge *s = &p->sge[3 * (size_t) j];
    const char *payload = (const char *) (uintptr_t) s[1].addr;
    size_t plen = wc->byte_len - HDR_BYTES;
    if (plen > s[1].length) {
        char *whole = p->scratch + HDR_BYTES * (size_t) p->nfrags + p->payload_max;
        memcpy(whole, payload, s[1].length);
        memcpy(whole + s[1].length, (const char *) (uintptr_t) s[2].addr, plen - s[1].length);
        payload = whole;
    }
    return ibmc_mcast_placed_in(&c->ch, j, h + IBMC_GRH_BYTES, payload, plen, src, &placed);
}

int MPIDI_IBMC_mcast_place_poll(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc, int *found)
{
    *found = 0;
    for (MPIDI_IBMC_mcast_place_t * p = mc->places; p; p = p->next) {
        if (!p->armed || p->taken == p->posted)
            continue;
        struct ibv_wc wc[IBMC_MCAST_POLL];
        int n = ibv_poll_cq(p->cq, IBMC_MCAST_POLL, wc);
        if (n < 0)
            return MPIDI_IBMC_VERBS_ERROR("ibv_poll_cq(in place)", EIO);
        /* counted before any is handed over: a disarm on the way waits
         * only for the completions still in the queue */
        p->taken += (uint32_t) n;
        *found += n;
        /* the engine may end the receive, or start it over, on the way:
         * the rest of the batch is then of an arm that is gone */
        uint32_t arm = p->arms;
        for (int i = 0; i < n && p->armed && p->arms == arm; i++) {
            int mpi_errno = place_completion(st, mc, p, &wc[i]);
            if (mpi_errno)
                return mpi_errno;
        }
    }
    return MPI_SUCCESS;
}
