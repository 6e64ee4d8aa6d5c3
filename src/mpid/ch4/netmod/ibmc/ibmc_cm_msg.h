/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Checking a connection datagram (ibmc_cm_msg_t) before the state machine
 * sees it.  Anyone on the fabric can send to a UD QP, so a datagram is
 * dropped, not trusted, unless
 *   - it is whole, has the magic, a known type and the job's random key;
 *   - it names a rank of the job;
 *   - it came from that rank's UD QP (the completion's source QPN) and from
 *     that rank's port: the source LID on InfiniBand, the source GID of the
 *     GRH (or the IPv4 source address, for RoCE v2 over IPv4) on RoCE.
 * The REP's nonce echo is checked by the caller, which holds the nonce.
 *
 * Pure logic: no MPICH, no verbs. */

#ifndef IBMC_CM_MSG_H_INCLUDED
#define IBMC_CM_MSG_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "ibmc_wire.h"

/* Where a datagram came from, as its work completion and receive buffer say. */
typedef struct {
    uint32_t src_qp;            /* wc->src_qp */
    uint16_t slid;              /* wc->slid */
    int link_layer;             /* this port's: 1 InfiniBand, 2 Ethernet (IBV_LINK_LAYER_*) */
    const uint8_t *grh;         /* the 40 bytes before the payload, or NULL without IBV_WC_GRH */
} ibmc_cm_src_t;

enum {
    IBMC_CM_MSG_OK = 0,
    IBMC_CM_MSG_ERR_SHORT = -1,         /* shorter than a message */
    IBMC_CM_MSG_ERR_MAGIC = -2,         /* not ibmc's */
    IBMC_CM_MSG_ERR_JOB = -3,           /* another job's key */
    IBMC_CM_MSG_ERR_TYPE = -4,          /* neither REQ nor REP */
    IBMC_CM_MSG_ERR_RANK = -5,          /* no such rank in the job */
    IBMC_CM_MSG_ERR_SOURCE = -6,        /* not sent from the claimed rank's UD QP and port */
    IBMC_CM_MSG_ERR_ECHO = -7           /* a REP that does not answer our REQ */
};

/* The link layers, as ibv_port_attr has them (verbs.h is not included). */
#define IBMC_CM_LINK_IB 1
#define IBMC_CM_LINK_ETH 2

/* Check `len` bytes at `buf` against the job's key and size; fills `msg`. */
int ibmc_cm_msg_parse(const void *buf, size_t len, uint64_t job_key, int world_size,
                      ibmc_cm_msg_t * msg);

/* IBMC_CM_MSG_OK if a datagram from `src` can have been sent by the process
 * whose business card is `card`, else IBMC_CM_MSG_ERR_SOURCE. */
int ibmc_cm_msg_check_source(const ibmc_card_t * card, const ibmc_cm_src_t * src);

const char *ibmc_cm_msg_strerror(int err);

#endif /* IBMC_CM_MSG_H_INCLUDED */
