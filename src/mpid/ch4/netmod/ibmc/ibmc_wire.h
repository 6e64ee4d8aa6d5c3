/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Formats of what ibmc puts on the wire.  All fields are in the sender's byte
 * order: ibmc does not support jobs that mix byte orders. */

#ifndef IBMC_WIRE_H_INCLUDED
#define IBMC_WIRE_H_INCLUDED

#include <stdint.h>

/* Types of the packets that travel over RC queue pairs. */
enum {
    IBMC_PKT_AM = 1,            /* first packet of an active message */
    IBMC_PKT_AM_CONT = 2,       /* continuation of the active message in progress */
    IBMC_PKT_RTU = 3,           /* "ready to use": ends the connection handshake */
    IBMC_PKT_RNDV = 4,          /* AM header + ibmc_rndv_t: the receiver pulls the data */
    IBMC_PKT_RNDV_FIN = 5,      /* ibmc_rndv_fin_t: the pull is done, the sender's buffer is free */
    IBMC_PKT_CREDIT = 6         /* only gives credits back (ibmc_credit.h); needs none itself */
};

/* Header flags. */
enum {
    IBMC_PKT_F_STARVED = 1      /* the sender waited for credits: lend it more (ibmc_credit.h) */
};

/* Header of every RC packet.  Its size is a multiple of 8 so that the CH4 AM
 * header that follows it is 8-byte aligned inside the receive buffer, and the
 * MPIDIG handlers can read it in place. */
typedef struct {
    uint32_t src_rank;          /* sender's rank in MPI_COMM_WORLD */
    uint8_t type;               /* IBMC_PKT_* */
    uint8_t src_vci;
    uint8_t dst_vci;
    uint8_t flags;              /* IBMC_PKT_F_* */
    uint16_t handler_id;        /* MPIDIG handler (IBMC_PKT_AM) */
    uint16_t credits;           /* receive buffers freed for the peer (ibmc_credit.h) */
    uint32_t am_hdr_sz;         /* CH4 AM header bytes (IBMC_PKT_AM) */
    uint64_t msg_sz;            /* am_hdr_sz + data bytes of the whole message (IBMC_PKT_AM) */
} ibmc_pkt_hdr_t;

_Static_assert(sizeof(ibmc_pkt_hdr_t) % 8 == 0, "ibmc_pkt_hdr_t must keep 8-byte alignment");

/* Rendezvous: where the receiver reads the message from.  It follows the CH4
 * AM header in an IBMC_PKT_RNDV packet, whose msg_sz counts the AM header and
 * the data that stays in the sender's buffer (so it may be unaligned: copy it
 * out).  cookie comes back in the IBMC_PKT_RNDV_FIN. */
typedef struct {
    uint64_t addr;              /* start of the sender's (contiguous) data */
    uint64_t cookie;            /* the sender's rendezvous state */
    uint32_t rkey;
    uint32_t reserved;
} ibmc_rndv_t;

typedef struct {
    uint64_t cookie;
} ibmc_rndv_fin_t;

/* Connection-manager datagrams, sent over UD (see ibmc_cm_fsm.h). */
enum {
    IBMC_CM_MSG_REQ = 1,
    IBMC_CM_MSG_REP = 2
};

#define IBMC_CM_MAGIC 0x69626d63u       /* "ibmc" */

typedef struct {
    uint32_t magic;
    uint32_t type;              /* IBMC_CM_MSG_* */
    uint32_t src_rank;          /* sender's rank in MPI_COMM_WORLD */
    uint32_t rc_qpn;            /* sender's RC QP for this pair */
    uint64_t job_key;           /* identifies the job, so strays from another job are dropped */
} ibmc_cm_msg_t;

/* Business card, exchanged through PMI at MPI_Init.  Fixed size. */
typedef struct {
    uint8_t gid[16];
    uint16_t lid;
    uint8_t port;
    uint8_t link_layer;         /* IBV_LINK_LAYER_* */
    uint8_t active_mtu;         /* enum ibv_mtu */
    uint8_t reserved[3];
    uint32_t ud_qpn;            /* where connection requests go */
} ibmc_card_t;

#endif /* IBMC_WIRE_H_INCLUDED */
