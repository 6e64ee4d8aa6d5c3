/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The receiving side of one communicator's multicast stream: validation of
 * every packet against the receiver's own state, the reorder window,
 * in-order delivery, duplicate suppression, gap detection for NAKs and the
 * skewed ACK schedule.
 *
 * The window.  `next` is the first stream position not yet delivered.  The
 * receiver accepts positions [next, next + window) and nothing else: below
 * is a duplicate, above is out of window (no correct sender sends there, see
 * ibmc_mcast_tx.h).  Each position in the window has a slot:
 *   - a fragment of the posted message (the MPI_Bcast this process is in)
 *     is copied straight into the user's buffer at its final place, in any
 *     order, and its slot is marked done;
 *   - a fragment of a later message (its root went ahead, seed 000 §4.2)
 *     is copied into the slot's memory and held until that message is
 *     posted; duplicates of either are dropped (seed 000 §5.2).
 * `next` advances over done slots, so delivery is in order and exactly
 * once, and slot memory is bounded by window x payload_max.
 *
 * Trust.  Nothing in a packet is believed before it is checked: the header's
 * identity (job key, context id, epoch), its shape (sizes, fragment index
 * against the message length), its position against the window, and the
 * sender against the message's root, where the source comes from the
 * completion, not from the packet.  A packet that fails any check is dropped
 * and counted under its reason, and has written nothing.  A packet that
 * passes but disagrees with the posted message's length is the application's
 * error (mismatched MPI_Bcast counts) and is reported as such.
 *
 * Loss.  A fragment is missing when a later position from the same root
 * has been seen (a gap, NAKed at once: a root sends in order) or when the posted message stalls (the caller's timer, from
 * the measured round trip, asks for every missing fragment including the
 * tail: seed 002 §III.D's lost-EOF case without an EOF).  NAKs go to the
 * message's root over RC, which answers over RC (seed 002 §III.B).
 *
 * ACKs.  A receiver acknowledges its cumulative `next` once every `ack_every`
 * positions, at the positions p with p mod ack_every == ack_skew mod
 * ack_every, so that receivers take turns (seed 000 §4.4, skewed ACK), and
 * at once when a delivered packet carries IBMC_MCAST_F_ACK_REQ.
 *
 * Pure logic, unit-tested on the host (test/unit/test_mcast_rx.c,
 * test_mcast_sim.c). */

#ifndef IBMC_MCAST_RX_H_INCLUDED
#define IBMC_MCAST_RX_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "ibmc_mcast_wire.h"

/* What became of a packet; the counters below are indexed by it. */
typedef enum {
    IBMC_MCAST_RX_DELIVERED = 0,        /* copied into the posted message's buffer */
    IBMC_MCAST_RX_HELD,         /* copied into its slot for a later message */
    IBMC_MCAST_RX_DUPLICATE,    /* that position was already delivered or held */
    IBMC_MCAST_RX_MALFORMED,    /* not a well-formed data packet of this protocol */
    IBMC_MCAST_RX_FOREIGN,      /* another job's or another communicator's: its
                                 * header's identity, or a sender that is no member */
    IBMC_MCAST_RX_STALE_EPOCH,  /* this communicator's group, an earlier use of it */
    IBMC_MCAST_RX_OUT_OF_WINDOW,        /* beyond the window: no correct sender goes there */
    IBMC_MCAST_RX_WRONG_SOURCE, /* a member, not the root of its message */
    IBMC_MCAST_RX_MISMATCH,     /* the root's message length differs from the posted one */
    IBMC_MCAST_RX_SHADOWED,     /* a fragment of a message received in place that came
                                 * by the main queue: the in-place queue's twin is
                                 * taken, or a NAK asks again; not written */
    IBMC_MCAST_RX_NVERDICTS
} ibmc_mcast_rx_verdict_t;

typedef enum {
    IBMC_MCAST_SLOT_EMPTY = 0,
    IBMC_MCAST_SLOT_HELD,       /* payload in slot memory, message not posted yet */
    IBMC_MCAST_SLOT_DONE        /* delivered to the posted message, ahead of next */
} ibmc_mcast_slot_state_t;

typedef struct {
    uint8_t state;              /* ibmc_mcast_slot_state_t */
    uint8_t ack_req;            /* the held packet asked for an ACK */
    uint16_t payload_len;
    uint32_t frag;
    uint32_t released;
    int src;                    /* communicator rank the packet came from */
    uint64_t msg_len;
} ibmc_mcast_slot_t;

/* A range of missing stream positions [first, first + count). */
typedef struct {
    uint32_t first;
    uint32_t count;
} ibmc_mcast_range_t;

typedef struct {
    ibmc_mcast_id_t id;
    uint32_t payload_max;       /* data bytes per fragment */
    uint32_t window;            /* slots: a power of two */
    uint32_t ack_every;         /* M of the skewed ACK: a power of two, 0 for none */
    uint32_t ack_skew;          /* this receiver's turn: p mod M == ack_skew mod M */
    ibmc_mcast_slot_t *slots;   /* window entries, indexed by position mod window */
    unsigned char *slot_mem;    /* window x payload_max bytes for held payloads */

    uint32_t next;              /* first position not yet delivered */
    uint32_t seen_end;          /* one past the highest position the posted message's
                                 * root is known to have sent */
    uint32_t nak_mark;          /* gap NAKs have covered positions below this */

    /* the posted message */
    int posted;
    int root;
    unsigned char *buf;
    uint64_t len;
    uint32_t first;             /* its first position */
    uint32_t nfrags;
    uint32_t got;               /* fragments delivered */

    /* acknowledgements */
    uint32_t acked;             /* the last `next` acknowledged */
    int acked_root;             /* the ack_root it went to (-1: none yet) */
    int ack_req;                /* an ACK was asked for, due once next passes ack_req_pos */
    uint32_t ack_req_pos;
    int ack_root;               /* where the next ACK goes: the root of the
                                 * posted or last message */
    uint32_t released;          /* highest `released` seen from a root (for a new root) */

    uint64_t count[IBMC_MCAST_RX_NVERDICTS];
    uint64_t frags_delivered;   /* fragments copied to posted buffers, held ones included */
    uint64_t copies;            /* payload copies: into the posted buffer, into a slot,
                                 * and out of a slot when its message is posted */
    uint64_t in_place;          /* fragments of posted messages found at their place */
    /* The posted message is received in place: a receive queue of its own
     * holds work requests whose payload goes straight to each fragment's
     * place in buf, in arrival order, beside the main queue, which gets
     * every packet too.  While armed, a fragment of the posted message is
     * delivered only from its place (its payload pointer is its place);
     * one that comes any other way is IBMC_MCAST_RX_SHADOWED and writes
     * nothing, because the device may still write that place. */
    int armed;
    /* The last message received in place (ibmc_mcast_rx_shadow): the main
     * queue's twin of one of its fragments, once that fragment is
     * delivered, is IBMC_MCAST_RX_SHADOWED too, never a duplicate. */
    uint32_t shadow_first, shadow_n;
    int shadow_root;
    uint64_t shadow_len;
} ibmc_mcast_rx_t;

/* window must be a power of two, at most IBMC_MCAST_WINDOW_MAX; slots has
 * window entries and slot_mem window x payload_max bytes, both owned by the
 * caller.  The stream starts at position 0. */
void ibmc_mcast_rx_init(ibmc_mcast_rx_t * rx, ibmc_mcast_id_t id, uint32_t payload_max,
                        uint32_t window, uint32_t ack_every, uint32_t ack_skew,
                        ibmc_mcast_slot_t * slots, unsigned char *slot_mem);

/* 1 if position seq is one of the posted message's not yet delivered. */
int ibmc_mcast_rx_awaits(const ibmc_mcast_rx_t * rx, uint32_t seq);

/* The posted message is being received in place (rx->armed is set):
 * remember it as the last such message. */
void ibmc_mcast_rx_shadow(ibmc_mcast_rx_t * rx);

/* The same with the header (sizeof(ibmc_mcast_hdr_t) bytes) and the
 * payload of plen bytes apart.  A fragment of the posted message whose
 * payload already is at its place in the posted buffer is delivered
 * without a copy (counted in in_place). */
ibmc_mcast_rx_verdict_t ibmc_mcast_rx_packet_at(ibmc_mcast_rx_t * rx, const void *hdr,
                                                const void *payload, size_t plen, int src);

/* This process enters the broadcast of the next message: len bytes into buf
 * from root.  Fragments already held for it are delivered now.  Returns
 * IBMC_MCAST_RX_DELIVERED, or IBMC_MCAST_RX_MISMATCH when a held fragment
 * from the root says the message has another length (the message is then
 * not usable).  Held fragments from another source are dropped and counted
 * as IBMC_MCAST_RX_WRONG_SOURCE. */
ibmc_mcast_rx_verdict_t ibmc_mcast_rx_post(ibmc_mcast_rx_t * rx, void *buf, uint64_t len,
                                           int root);

/* This process is the root of the next message of len bytes: its own
 * positions count as delivered here (anything held there came from
 * elsewhere and is dropped as IBMC_MCAST_RX_WRONG_SOURCE).  Returns the
 * message's first position. */
uint32_t ibmc_mcast_rx_own(ibmc_mcast_rx_t * rx, uint64_t len, int self);

/* One received packet of len bytes from communicator rank src (-1 when the
 * completion's source is not a member: IBMC_MCAST_RX_FOREIGN, whatever its
 * position). */
ibmc_mcast_rx_verdict_t ibmc_mcast_rx_packet(ibmc_mcast_rx_t * rx, const void *pkt, size_t len,
                                             int src);

/* A root's question to the group (IBMC_MCAST_ASK) of len bytes from
 * communicator rank src: checked like a data packet (identity, shape, a
 * member as source) and for an end no correct root can have reached (more
 * than a window past what this process delivered).  Returns
 * IBMC_MCAST_RX_DELIVERED, not counted, with *end, where src says it has
 * sent to, and *want_acks, whether it asks for ACKs too; or the reason it
 * is dropped, counted. */
ibmc_mcast_rx_verdict_t ibmc_mcast_rx_ask(ibmc_mcast_rx_t * rx, const void *pkt, size_t len,
                                          int src, uint32_t * end, int *want_acks);

/* The posted message has all its fragments; posting the next is allowed. */
static inline int ibmc_mcast_rx_complete(const ibmc_mcast_rx_t * rx)
{
    return !rx->posted || rx->got == rx->nfrags;
}

/* Ranges of the posted message's missing positions, at most max of them,
 * inside the window.  all = 0: only the new gaps below the highest position
 * seen (call after every packet; each gap is reported once).  all = 1: every
 * missing position, the tail included (call when the message has stalled
 * for the NAK timeout).  Returns the number of ranges written. */
int ibmc_mcast_rx_missing(ibmc_mcast_rx_t * rx, int all, ibmc_mcast_range_t * out, int max);

/* The posted message's root has sent every position below end (its ACK
 * request said so): what is missing of the message below end is a gap, lost
 * rather than late, and the next ibmc_mcast_rx_missing(all = 0) reports
 * it.  A position past the posted message says nothing about it. */
void ibmc_mcast_rx_sent_below(ibmc_mcast_rx_t * rx, uint32_t end);

/* Ranges of the posted message's missing positions below end, inside the
 * window, at most max of them, whether reported before or not: the answer
 * to the root's question, which comes again only while its ACKs stay
 * behind (an earlier NAK's answer may not have filled them). */
int ibmc_mcast_rx_missing_below(ibmc_mcast_rx_t * rx, uint32_t end, ibmc_mcast_range_t * out,
                                int max);

/* An ACK is wanted once next passes pos, whatever the ACK schedule. */
void ibmc_mcast_rx_want_ack(ibmc_mcast_rx_t * rx, uint32_t pos);

/* Nothing says the posted message's root has sent any of it: no fragment
 * has come, and no later packet or ACK request of that root.  A NAK now
 * could only ask for packets that may not exist yet. */
static inline int ibmc_mcast_rx_nothing_seen(const ibmc_mcast_rx_t * rx)
{
    return rx->posted && rx->got == 0 && ibmc_mcast_seq_diff(rx->seen_end, rx->first) <= 0;
}

/* Is an ACK due (skewed turn reached, or asked for)? */
int ibmc_mcast_rx_ack_due(const ibmc_mcast_rx_t * rx);

/* The cumulative position to acknowledge now, to rx->ack_root; marks it sent. */
uint32_t ibmc_mcast_rx_ack_take(ibmc_mcast_rx_t * rx);

#endif /* IBMC_MCAST_RX_H_INCLUDED */
