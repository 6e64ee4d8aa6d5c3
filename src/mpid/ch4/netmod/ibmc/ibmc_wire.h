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
    IBMC_PKT_CREDIT = 6,        /* only gives credits back (ibmc_credit.h); needs none itself */
    IBMC_PKT_MCAST = 7,         /* the multicast channel's ACK, NAK or retransmission (ibmc_mcast.h) */
    IBMC_PKT_FIN = 8            /* ibmc_fin_t: a round of MPI_Finalize's barrier (ibmc_finbar.h) */
};

/* Header flags. */
enum {
    IBMC_PKT_F_STARVED = 1,     /* the sender waited for credits: lend it more (ibmc_credit.h) */
    IBMC_PKT_F_MSG_SZ = 2,      /* ibmc_pkt_msg_sz_t follows the header: the message does not
                                 * end in this packet (first of a train, or IBMC_PKT_RNDV) */
    IBMC_PKT_F_SEND16 = 4       /* the AM header is MPIDIG_SEND's in the compact form of
                                 * ibmc_send16_t (IBMC_PKT_AM only) */
};

/* Header of every RC packet, 8 bytes.  The sender's rank is not in it: it
 * travels in the send's immediate data (IBV_WR_SEND_WITH_IMM), which costs
 * no payload byte.  A message that ends in its first packet, the common
 * case, needs no size either: it is the packet's length.  Short headers
 * matter because every byte of a small message is sent, received and
 * checksummed per packet (doc/design.md, "Headers").
 * The size is a multiple of 8 so that the CH4 AM header that follows it is
 * 8-byte aligned inside the receive buffer, and the MPIDIG handlers can read
 * it in place. */
typedef struct {
    uint8_t type;               /* IBMC_PKT_* */
    uint8_t flags;              /* IBMC_PKT_F_* */
    uint16_t credits;           /* receive buffers freed for the peer (ibmc_credit.h) */
    uint8_t handler_id;         /* MPIDIG handler (IBMC_PKT_AM, IBMC_PKT_RNDV) */
    uint8_t vcis;               /* source VCI << 4 | destination VCI */
    uint16_t am_hdr_sz;         /* CH4 AM header bytes as sent (IBMC_PKT_AM, IBMC_PKT_RNDV) */
} ibmc_pkt_hdr_t;

_Static_assert(sizeof(ibmc_pkt_hdr_t) == 8, "ibmc_pkt_hdr_t is 8 bytes on the wire");

#define IBMC_PKT_MAX_VCIS 16
#define IBMC_PKT_MAX_HANDLERS 256
#define IBMC_PKT_MAX_AM_HDR 65535

/* With IBMC_PKT_F_MSG_SZ: the AM header and data bytes of the whole message
 * (for IBMC_PKT_RNDV, the data that stays in the sender's buffer). */
typedef struct {
    uint64_t msg_sz;
} ibmc_pkt_msg_sz_t;

/* MPIDIG_SEND's eager header (MPIDIG_hdr_t, 48 bytes) in 16: the fields an
 * eager receive reads.  data_sz is the rest of the packet, rndv_hdr_sz is 0
 * and the sender's request travels only for a synchronous send, which
 * acknowledges it (IBMC_SEND16_F_SREQ; then sreq follows).  int32 keeps
 * context ids of extended context bits too. */
typedef struct {
    int32_t src_rank;           /* in the communicator */
    int32_t tag;
    uint32_t context_id;
    uint8_t flags;              /* MPIDIG_AM_SEND_FLAGS_* (only values below 0x80) */
    uint8_t error_bits;
    uint8_t bits;               /* IBMC_SEND16_F_* */
    uint8_t reserved;
} ibmc_send16_t;

_Static_assert(sizeof(ibmc_send16_t) == 16, "ibmc_send16_t is 16 bytes on the wire");

enum {
    IBMC_SEND16_F_SREQ = 1      /* a uint64_t sender request pointer follows */
};

/* Rendezvous: where the receiver reads the message from.  It follows the CH4
 * AM header in an IBMC_PKT_RNDV packet, whose msg_sz (IBMC_PKT_F_MSG_SZ) counts
 * the AM header and the data that stays in the sender's buffer.  It may be
 * unaligned: copy it out.  cookie comes back in the IBMC_PKT_RNDV_FIN. */
typedef struct {
    uint64_t addr;              /* start of the sender's (contiguous) data */
    uint64_t cookie;            /* the sender's rendezvous state */
    uint32_t rkey;
    uint32_t reserved;
} ibmc_rndv_t;

typedef struct {
    uint64_t cookie;
} ibmc_rndv_fin_t;

/* Payload of IBMC_PKT_FIN: this sender has reached `round` of the barrier. */
typedef struct {
    uint32_t round;
} ibmc_fin_t;

/* Connection-manager datagrams, sent over UD (see ibmc_cm_fsm.h). */
enum {
    IBMC_CM_MSG_REQ = 1,
    IBMC_CM_MSG_REP = 2
};

#define IBMC_CM_MAGIC 0x69626d63u       /* "ibmc" */

/* A datagram is believed only if it comes from the UD QP and address of the
 * rank it names (ibmc_cm_msg.h), carries the job's random key, and, for a
 * REP, echoes the nonce of this side's REQ: nobody outside the job can make
 * a rank connect to a QP of their choosing. */
typedef struct {
    uint32_t magic;
    uint32_t type;              /* IBMC_CM_MSG_* */
    uint32_t src_rank;          /* sender's rank in MPI_COMM_WORLD */
    uint32_t rc_qpn;            /* sender's RC QP for this pair */
    uint64_t job_key;           /* random per job (rank 0's card nonce): strays and forgeries are dropped */
    uint32_t rc_psn;            /* first packet sequence number of the sender's RC QP (random) */
    uint32_t reserved;
    uint64_t nonce;             /* random per connection: a REP must echo the REQ's */
    uint64_t echo;              /* REP: the nonce of the REQ it answers */
} ibmc_cm_msg_t;

_Static_assert(sizeof(ibmc_cm_msg_t) == 48, "ibmc_cm_msg_t is 48 bytes on the wire");

/* Business card, exchanged through PMI at MPI_Init.  Fixed size. */
typedef struct {
    uint8_t gid[16];
    uint16_t lid;
    uint8_t port;
    uint8_t link_layer;         /* IBV_LINK_LAYER_* */
    uint8_t active_mtu;         /* enum ibv_mtu */
    uint8_t reserved[3];
    uint32_t ud_qpn;            /* where connection requests go */
    uint32_t reserved2;
    uint64_t nonce;             /* random (getrandom): rank 0's makes the job key unguessable */
} ibmc_card_t;

#endif /* IBMC_WIRE_H_INCLUDED */
