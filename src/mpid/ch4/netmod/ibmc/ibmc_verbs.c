/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <errno.h>
#include <string.h>
#include "ibmc_verbs.h"

/* RC transport parameters.  rnr_retry 7 retries forever while the SRQ is
 * momentarily empty: the receiver reposts a buffer as soon as it has handed
 * the packet to MPIDIG, so running dry is transient.  timeout 18 (about one
 * second per try) times retry_cnt 6 lets a peer fall silent for several
 * seconds, as an oversubscribed node may, before the QP breaks and the job
 * aborts naming the peer.  retry_cnt is 6, not the 7 the field allows,
 * because Soft-RoCE (rdma_rxe, Linux 6.1) treats 7 as "retry forever" like
 * rnr_retry: a dead peer then hangs the sender instead of failing it
 * (test/ibmc/peerdeath.c checks that the sender fails). */
#define IBMC_RC_TIMEOUT 18
#define IBMC_RC_RETRY_CNT 6
#define IBMC_RC_RNR_RETRY 7
#define IBMC_RC_MIN_RNR_TIMER 12
#define IBMC_RC_RD_ATOMIC 4
/* Small packets go inline: the HCA (or rxe) takes the bytes with the work
 * request instead of fetching them through the memory region afterwards,
 * which saves a DMA read (a lookup and copy in rxe) on the latency path.
 * A device that cannot inline this much gets QPs without inline data. */
#define IBMC_RC_MAX_INLINE 256
#define IBMC_UD_MAX_INLINE 64

static int fail(ibmc_verbs_err_t * e, const char *call, int err)
{
    e->call = call;
    e->err = err ? err : EIO;
    return e->err;
}

int ibmc_verbs_setup(ibmc_hca_t * hca, int cq_depth, int srq_depth, ibmc_verbs_err_t * e)
{
    hca->pd = ibv_alloc_pd(hca->ctx);
    if (!hca->pd)
        return fail(e, "ibv_alloc_pd", errno);

    hca->cq = ibv_create_cq(hca->ctx, cq_depth, NULL, NULL, 0);
    if (!hca->cq)
        return fail(e, "ibv_create_cq", errno);

    struct ibv_srq_init_attr sattr;
    memset(&sattr, 0, sizeof(sattr));
    sattr.attr.max_wr = srq_depth;
    sattr.attr.max_sge = 1;
    hca->srq = ibv_create_srq(hca->pd, &sattr);
    if (!hca->srq)
        return fail(e, "ibv_create_srq", errno);
    return 0;
}

/* A UD QP from RESET (new, or after an error) to RTS with the Q_Key. */
static int ud_to_rts(ibmc_hca_t * hca, struct ibv_qp *qp, uint32_t qkey, ibmc_verbs_err_t * e)
{
    struct ibv_qp_attr attr;
    int rc;
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = hca->port;
    attr.qkey = qkey;
    rc = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
    if (rc)
        return fail(e, "ibv_modify_qp(UD, INIT)", rc);

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTR;
    rc = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
    if (rc)
        return fail(e, "ibv_modify_qp(UD, RTR)", rc);

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn = 0;
    rc = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
    if (rc)
        return fail(e, "ibv_modify_qp(UD, RTS)", rc);
    return 0;
}

/* A UD queue pair on `scq` (sends) and `rcq` (receives), brought to RTS
 * with `qkey`.  With block_self, the device is first asked not to loop the
 * QP's own multicast sends back to its receive queue
 * (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB: mlx4, mlx5); a device that refuses
 * the flag (rdma_rxe refuses every creation flag) gets a QP without it, and
 * *self_blocked says which.  The block is per QP: other processes' QPs on
 * the same device still receive the packet. */
static int create_ud_qp(ibmc_hca_t * hca, struct ibv_cq *scq, struct ibv_cq *rcq, uint32_t qkey,
                        int sq_depth, int rq_depth, int rq_sge, int block_self,
                        struct ibv_qp **qp, uint32_t * max_inline, int *self_blocked,
                        ibmc_verbs_err_t * e)
{
    struct ibv_qp_init_attr_ex init;
    memset(&init, 0, sizeof(init));
    init.send_cq = scq;
    init.recv_cq = rcq;
    init.qp_type = IBV_QPT_UD;
    init.cap.max_send_wr = sq_depth;
    init.cap.max_recv_wr = rq_depth;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = rq_sge;
    init.pd = hca->pd;
    *qp = NULL;
    for (int block = block_self; block >= 0 && !*qp; block--) {
        init.comp_mask = IBV_QP_INIT_ATTR_PD | (block ? IBV_QP_INIT_ATTR_CREATE_FLAGS : 0);
        init.create_flags = block ? IBV_QP_CREATE_BLOCK_SELF_MCAST_LB : 0;
        /* the multicast channel's questions to its group (a header) go inline */
        init.cap.max_inline_data = IBMC_UD_MAX_INLINE;
        *qp = ibv_create_qp_ex(hca->ctx, &init);
        if (!*qp && errno == EINVAL) {
            init.cap.max_inline_data = 0;
            *qp = ibv_create_qp_ex(hca->ctx, &init);
        }
        *self_blocked = block;
    }
    if (!*qp)
        return fail(e, "ibv_create_qp(UD)", errno);
    *max_inline = init.cap.max_inline_data;
    return ud_to_rts(hca, *qp, qkey, e);
}

int ibmc_verbs_create_ud_qp(ibmc_hca_t * hca, uint32_t qkey, int sq_depth, int rq_depth,
                            ibmc_verbs_err_t * e)
{
    uint32_t max_inline;
    int self_blocked;
    return create_ud_qp(hca, hca->cq, hca->cq, qkey, sq_depth, rq_depth, 1, 0, &hca->ud_qp,
                        &max_inline, &self_blocked, e);
}

int ibmc_verbs_set_qkey(struct ibv_qp *qp, uint32_t qkey, ibmc_verbs_err_t * e)
{
    struct ibv_qp_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.qkey = qkey;
    int rc = ibv_modify_qp(qp, &attr, IBV_QP_QKEY);
    return rc ? fail(e, "ibv_modify_qp(UD, Q_Key)", rc) : 0;
}

int ibmc_verbs_create_mcast_qp(ibmc_hca_t * hca, struct ibv_cq *scq, struct ibv_cq *rcq,
                               uint32_t qkey, int sq_depth, int rq_depth, struct ibv_qp **qp,
                               uint32_t * max_inline, int *self_blocked, ibmc_verbs_err_t * e)
{
    return create_ud_qp(hca, scq, rcq, qkey, sq_depth, rq_depth, 1, 1, qp, max_inline,
                        self_blocked, e);
}

int ibmc_verbs_create_place_qp(ibmc_hca_t * hca, struct ibv_cq *cq, uint32_t qkey, int rq_depth,
                               int rq_sge, struct ibv_qp **qp, ibmc_verbs_err_t * e)
{
    uint32_t max_inline;
    int self_blocked;
    int rc = create_ud_qp(hca, cq, cq, qkey, 1, rq_depth, rq_sge, 0, qp, &max_inline,
                          &self_blocked, e);
    if (rc && *qp) {
        ibv_destroy_qp(*qp);
        *qp = NULL;
    }
    return rc;
}

int ibmc_verbs_ud_restart(ibmc_hca_t * hca, struct ibv_qp *qp, uint32_t qkey, ibmc_verbs_err_t * e)
{
    struct ibv_qp_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RESET;
    int rc = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
    if (rc)
        return fail(e, "ibv_modify_qp(UD, RESET)", rc);
    return ud_to_rts(hca, qp, qkey, e);
}

int ibmc_verbs_qp_to_error(struct ibv_qp *qp, ibmc_verbs_err_t * e)
{
    struct ibv_qp_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_ERR;
    int rc = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
    return rc ? fail(e, "ibv_modify_qp(UD, ERR)", rc) : 0;
}

int ibmc_verbs_create_rc_qp(ibmc_hca_t * hca, int sq_depth, struct ibv_qp **qp,
                            ibmc_verbs_err_t * e)
{
    struct ibv_qp_init_attr init;
    memset(&init, 0, sizeof(init));
    init.send_cq = hca->cq;
    init.recv_cq = hca->cq;
    init.srq = hca->srq;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = sq_depth;
    init.cap.max_send_sge = 1;
    init.cap.max_inline_data = IBMC_RC_MAX_INLINE;
    init.sq_sig_all = 0;
    *qp = ibv_create_qp(hca->pd, &init);
    if (!*qp && errno == EINVAL) {
        init.cap.max_inline_data = 0;
        *qp = ibv_create_qp(hca->pd, &init);
    }
    if (!*qp)
        return fail(e, "ibv_create_qp(RC)", errno);
    hca->rc_max_inline = init.cap.max_inline_data;

    struct ibv_qp_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = hca->port;
    /* the rendezvous protocol reads from a peer and the ibmc_node_rd
     * allgather writes into node segments; what a peer may touch is decided
     * per registration (only segments allow remote writes) */
    attr.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
    int rc = ibv_modify_qp(*qp, &attr,
                           IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                           IBV_QP_ACCESS_FLAGS);
    if (rc) {
        ibv_destroy_qp(*qp);
        *qp = NULL;
        return fail(e, "ibv_modify_qp(RC, INIT)", rc);
    }
    return 0;
}

static void fill_ah_attr(const ibmc_hca_t * hca, const ibmc_card_t * card, struct ibv_ah_attr *ah)
{
    memset(ah, 0, sizeof(*ah));
    ah->port_num = hca->port;
    ah->dlid = card->lid;
    ah->sl = 0;
    /* RoCE has no LIDs: every packet is routed by the GRH */
    if (hca->link_layer == IBV_LINK_LAYER_ETHERNET) {
        ah->is_global = 1;
        memcpy(ah->grh.dgid.raw, card->gid, 16);
        ah->grh.sgid_index = hca->gid_index;
        ah->grh.hop_limit = 64;
    }
}

int ibmc_verbs_connect_rc_qp(ibmc_hca_t * hca, struct ibv_qp *qp, const ibmc_card_t * card,
                             uint32_t remote_qpn, uint32_t remote_psn, uint32_t local_psn,
                             ibmc_verbs_err_t * e)
{
    struct ibv_qp_attr attr;
    int rc;

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = hca->active_mtu < (enum ibv_mtu) card->active_mtu ?
        hca->active_mtu : (enum ibv_mtu) card->active_mtu;
    attr.dest_qp_num = remote_qpn;
    attr.rq_psn = remote_psn & IBMC_PSN_MASK;
    attr.max_dest_rd_atomic = IBMC_RC_RD_ATOMIC < hca->dev_attr.max_qp_rd_atom ?
        IBMC_RC_RD_ATOMIC : hca->dev_attr.max_qp_rd_atom;
    attr.min_rnr_timer = IBMC_RC_MIN_RNR_TIMER;
    fill_ah_attr(hca, card, &attr.ah_attr);
    rc = ibv_modify_qp(qp, &attr,
                       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (rc)
        return fail(e, "ibv_modify_qp(RC, RTR)", rc);

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTS;
    attr.timeout = IBMC_RC_TIMEOUT;
    attr.retry_cnt = IBMC_RC_RETRY_CNT;
    attr.rnr_retry = IBMC_RC_RNR_RETRY;
    attr.sq_psn = local_psn & IBMC_PSN_MASK;
    attr.max_rd_atomic = IBMC_RC_RD_ATOMIC < hca->dev_attr.max_qp_init_rd_atom ?
        IBMC_RC_RD_ATOMIC : hca->dev_attr.max_qp_init_rd_atom;
    rc = ibv_modify_qp(qp, &attr,
                       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
    if (rc)
        return fail(e, "ibv_modify_qp(RC, RTS)", rc);
    return 0;
}

int ibmc_verbs_create_ah(ibmc_hca_t * hca, const ibmc_card_t * card, struct ibv_ah **ah,
                         ibmc_verbs_err_t * e)
{
    struct ibv_ah_attr attr;
    fill_ah_attr(hca, card, &attr);
    *ah = ibv_create_ah(hca->pd, &attr);
    if (!*ah)
        return fail(e, "ibv_create_ah", errno);
    return 0;
}

void ibmc_verbs_fill_card(const ibmc_hca_t * hca, ibmc_card_t * card)
{
    memset(card, 0, sizeof(*card));
    memcpy(card->gid, hca->gid.raw, 16);
    card->lid = hca->lid;
    card->port = (uint8_t) hca->port;
    card->link_layer = (uint8_t) hca->link_layer;
    card->active_mtu = (uint8_t) hca->active_mtu;
    card->ud_qpn = hca->ud_qp ? hca->ud_qp->qp_num : 0;
}

void ibmc_verbs_teardown(ibmc_hca_t * hca)
{
    if (hca->ud_qp)
        ibv_destroy_qp(hca->ud_qp);
    if (hca->srq)
        ibv_destroy_srq(hca->srq);
    if (hca->cq)
        ibv_destroy_cq(hca->cq);
    if (hca->pd)
        ibv_dealloc_pd(hca->pd);
    if (hca->ctx)
        ibv_close_device(hca->ctx);
    hca->ud_qp = NULL;
    hca->srq = NULL;
    hca->cq = NULL;
    hca->pd = NULL;
    hca->ctx = NULL;
}
