/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The thin layer over rdma-core: opening the HCA, creating and connecting
 * queue pairs, posting.  It knows nothing of MPICH; it returns 0 or an errno
 * value and names the verbs call that failed, and the caller turns that into
 * an MPICH error. */

#ifndef IBMC_VERBS_H_INCLUDED
#define IBMC_VERBS_H_INCLUDED

#include <stdint.h>
#include <infiniband/verbs.h>
#include "ibmc_wire.h"

/* Q_Keys with the high bit set are controlled ones an unprivileged process
 * may not send with; the datagram QP's key is the job key's low 31 bits. */
#define IBMC_QKEY_MASK 0x7fffffffu
#define IBMC_PSN_MASK 0xffffffu
#define IBMC_GRH_BYTES 40       /* every UD receive buffer starts with room for the GRH */

typedef struct {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;          /* one CQ for every queue pair of the process */
    struct ibv_srq *srq;        /* eager receive buffers shared by all RC QPs */
    struct ibv_qp *ud_qp;       /* connection-manager datagrams */
    struct ibv_device_attr dev_attr;
    int port;
    int gid_index;
    int link_layer;             /* IBV_LINK_LAYER_* */
    enum ibv_mtu active_mtu;
    uint16_t lid;
    union ibv_gid gid;
    uint32_t rc_max_inline;     /* bytes an RC send may carry inside its work request */
} ibmc_hca_t;

/* Where a failed call is named. */
typedef struct {
    const char *call;
    int err;
} ibmc_verbs_err_t;

/* Protection domain, the CQ and the SRQ on an opened context. */
int ibmc_verbs_setup(ibmc_hca_t * hca, int cq_depth, int srq_depth, ibmc_verbs_err_t * e);

/* The UD QP, brought to RTS with Q_Key `qkey`. */
int ibmc_verbs_create_ud_qp(ibmc_hca_t * hca, uint32_t qkey, int sq_depth, int rq_depth,
                            ibmc_verbs_err_t * e);

/* Change a UD QP's Q_Key (RTS to RTS). */
int ibmc_verbs_set_qkey(struct ibv_qp *qp, uint32_t qkey, ibmc_verbs_err_t * e);

/* The multicast channel's UD QP (mcast/ibmc_mcast_device.c): on its own completion
 * queues, one for sends and one for receives, with the Q_Key of its groups,
 * brought to RTS.  *max_inline: the bytes a send may carry inline (0 on a
 * device that cannot).  *self_blocked: 1 if the device took
 * IBV_QP_CREATE_BLOCK_SELF_MCAST_LB, so the QP's own multicast sends are not
 * looped back to it; 0 if it refused and they are. */
int ibmc_verbs_create_mcast_qp(ibmc_hca_t * hca, struct ibv_cq *scq, struct ibv_cq *rcq,
                               uint32_t qkey, int sq_depth, int rq_depth, struct ibv_qp **qp,
                               uint32_t * max_inline, int *self_blocked, ibmc_verbs_err_t * e);

/* A persistent broadcast's in-place receive QP (mcast/ibmc_mcast_place.c):
 * UD, receives only (rq_depth work requests of rq_sge entries), on one
 * completion queue, with the Q_Key of its group, brought to RTS. */
int ibmc_verbs_create_place_qp(ibmc_hca_t * hca, struct ibv_cq *cq, uint32_t qkey, int rq_depth,
                               int rq_sge, struct ibv_qp **qp, ibmc_verbs_err_t * e);
/* To the error state, which flushes every receive still posted. */
int ibmc_verbs_qp_to_error(struct ibv_qp *qp, ibmc_verbs_err_t * e);
/* A UD QP back through RESET to RTS, its queues empty. */
int ibmc_verbs_ud_restart(ibmc_hca_t * hca, struct ibv_qp *qp, uint32_t qkey, ibmc_verbs_err_t * e);

/* An RC QP attached to the SRQ, in INIT. */
int ibmc_verbs_create_rc_qp(ibmc_hca_t * hca, int sq_depth, struct ibv_qp **qp,
                            ibmc_verbs_err_t * e);

/* Move an RC QP from INIT through RTR to RTS towards `remote_qpn` of the
 * process described by `card`, whose QP starts at `remote_psn`; ours starts
 * at `local_psn`. */
int ibmc_verbs_connect_rc_qp(ibmc_hca_t * hca, struct ibv_qp *qp, const ibmc_card_t * card,
                             uint32_t remote_qpn, uint32_t remote_psn, uint32_t local_psn,
                             ibmc_verbs_err_t * e);

/* An address handle for sending datagrams to the process described by `card`. */
int ibmc_verbs_create_ah(ibmc_hca_t * hca, const ibmc_card_t * card, struct ibv_ah **ah,
                         ibmc_verbs_err_t * e);

void ibmc_verbs_fill_card(const ibmc_hca_t * hca, ibmc_card_t * card);

/* Tear down everything ibmc_verbs_setup and ibmc_verbs_create_ud_qp made, and
 * close the context.  Safe on a partially set-up hca. */
void ibmc_verbs_teardown(ibmc_hca_t * hca);

#endif /* IBMC_VERBS_H_INCLUDED */
