/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* What the multicast channel puts on the wire.  Like ibmc_wire.h, fields are
 * in the sender's byte order: ibmc does not support jobs that mix them.
 *
 * A communicator's broadcasts form one stream of packets numbered by `seq`,
 * whoever the root: every member knows every message's length (MPI requires
 * matching type signatures), so every member computes where message k
 * starts in the stream without being told, and a new root continues the
 * numbering where the last message ended.  Per-communicator sequence numbers
 * are seed 000 §5.2; numbering packets instead of messages lets one reorder
 * window and one NAK format serve messages of any length (seed 002 §III.B
 * numbers bytes for the same reason). */

#ifndef IBMC_MCAST_WIRE_H_INCLUDED
#define IBMC_MCAST_WIRE_H_INCLUDED

#include <stdint.h>

#define IBMC_MCAST_MAGIC 0x6d63u        /* "mc" */
#define IBMC_MCAST_VERSION 1

enum {
    IBMC_MCAST_DATA = 1,        /* one fragment of a broadcast message */
    IBMC_MCAST_PROBE = 2,       /* no payload: the channel's rank 0 checking, before first
                                 * use, that the group reaches every member */
    IBMC_MCAST_ASK = 3          /* no payload: the sender, a root whose ACKs stalled, has
                                 * sent every position below `seq`; each member NAKs what
                                 * it lost below it, and with IBMC_MCAST_F_ACK_REQ
                                 * brings its ACK up to date */
};

enum {
    /* The sender's window is half full: every receiver that delivers this
     * packet acknowledges at once, whatever its skewed turn (ibmc_mcast_rx.h). */
    IBMC_MCAST_F_ACK_REQ = 1,
    /* Sent again over RC in answer to a NAK, not by multicast. */
    IBMC_MCAST_F_RETRANSMIT = 2
};

/* Header of every multicast data packet, and of its retransmission over RC,
 * so that both take the same receive path.  48 bytes.  The root's rank is
 * not in it: the receiver takes the source from the completion (UD source
 * QPN and GID, or the RC queue pair), which a sender cannot forge in a
 * header. */
typedef struct {
    uint16_t magic;             /* IBMC_MCAST_MAGIC */
    uint8_t version;            /* IBMC_MCAST_VERSION */
    uint8_t type;               /* IBMC_MCAST_* */
    uint16_t payload_len;       /* bytes after the header */
    uint16_t flags;             /* IBMC_MCAST_F_* */
    uint32_t context_id;        /* the communicator's, and */
    uint32_t epoch;             /* its use of the group: a reused group's old packets differ */
    uint32_t seq;               /* position in the communicator's packet stream */
    uint32_t frag;              /* index of this fragment in its message */
    uint32_t released;          /* every member had delivered all packets before this one
                                 * when it was sent: a new root's flow control starts here */
    uint32_t reserved;
    uint64_t job_key;           /* random per job (rank 0's getrandom): strays from other jobs */
    uint64_t msg_len;           /* bytes of the whole message */
} ibmc_mcast_hdr_t;

_Static_assert(sizeof(ibmc_mcast_hdr_t) == 48, "ibmc_mcast_hdr_t is 48 bytes on the wire");

/* The identity every packet of one communicator's stream carries. */
typedef struct {
    uint64_t job_key;
    uint32_t context_id;
    uint32_t epoch;
} ibmc_mcast_id_t;

/* Fragments of a message of len bytes at `payload_max` bytes each; an empty
 * message has none (MPI_Bcast of no data sends nothing). */
static inline uint64_t ibmc_mcast_nfrags(uint64_t len, uint32_t payload_max)
{
    return len / payload_max + (len % payload_max != 0);
}

/* Serial-number order of two stream positions (RFC 1982): a - b as a signed
 * distance, valid while the two are less than 2^31 apart, which the windows
 * (at most IBMC_MCAST_WINDOW_MAX packets) guarantee. */
static inline int32_t ibmc_mcast_seq_diff(uint32_t a, uint32_t b)
{
    return (int32_t) (a - b);
}

#define IBMC_MCAST_WINDOW_MAX 32768

/* The control messages of the channel, carried over the RC connections as
 * IBMC_PKT_MCAST packets: this header, then for DATA and RELAY a whole
 * multicast packet (header and payload). */
enum {
    IBMC_MCAST_RC_ACK = 1,      /* a = the sender's cumulative position (a co-root's:
                                 * its subtree's; root >= 0 names the root when it goes
                                 * to a parent co-root) */
    IBMC_MCAST_RC_NAK = 2,      /* positions [a, a + b) of root's message are missing */
    IBMC_MCAST_RC_DATA = 3,     /* a packet of root's message follows, sent again for a NAK */
    IBMC_MCAST_RC_ACK_REQ = 4,  /* the asker's window or aggregate is stuck on the
                                 * receiver: ACK now (for root's messages, root >= 0) */
    IBMC_MCAST_RC_PROBE_ACK = 5,        /* the routing probe reached this member */
    IBMC_MCAST_RC_RELAY = 6,    /* a packet of root's message follows, for a co-root */
    IBMC_MCAST_RC_ARRIVE = 7    /* a = barriers and small allreduces the sender's
                                 * subtree has entered, b = the sender's fanout, to its
                                 * parent (ibmc_mcast_arrive.h), when no board write can
                                 * go; for an allreduce the subtree's partial result
                                 * follows */
};

enum {
    /* a NAK of a gap: the root sent a later packet, so these were sent too */
    IBMC_MCAST_RC_F_GAP = 1
};

typedef struct {
    uint8_t kind;               /* IBMC_MCAST_RC_* */
    uint8_t flags;              /* IBMC_MCAST_RC_F_* */
    uint8_t reserved[2];
    uint32_t context_id;
    uint32_t epoch;
    uint32_t a, b;
    int32_t root;               /* NAK, DATA, RELAY, and ACK or ACK_REQ between
                                 * co-roots: the root of the message; checked against the
                                 * plan before it is believed; otherwise -1 */
} ibmc_mcast_rc_t;

#endif /* IBMC_MCAST_WIRE_H_INCLUDED */
