/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The sending side of one communicator's multicast stream, at the root of a
 * broadcast: the ring of sent packets kept for retransmission, the ACK
 * bookkeeping that frees it, and the flow control that keeps every receiver
 * inside its window.
 *
 * The ring (seed 000 §4.2).  The root copies each fragment, header and
 * payload, into the ring slot of its stream position and sends it from
 * there, so MPI_Bcast returns at the root as soon as the last fragment is
 * in the ring, before any ACK.  A slot stays until every member has
 * acknowledged its position, because until then a member may NAK it.
 *
 * Flow control.  A receiver accepts positions [next, next + window) of its
 * own stream (ibmc_mcast_rx.h), so the root sends position p only while
 * p < min_acked + window, where min_acked is the lowest cumulative ACK of
 * any member: no correct sender ever sends out of a receiver's window.  The
 * ring has as many slots as the window, so a slot is never reused while a
 * member may still ask for it.  ACKs say how far a receiver has delivered,
 * which is also how far its slots have been freed, so they are the credits
 * of seed 000 §5.4 as well.
 *
 * Changing roots.  The stream is the communicator's, not the root's, and
 * members acknowledge to the root of the message they are in.  A new root
 * therefore starts from the `released` position carried by the previous
 * root's packets (the previous root's min_acked when it sent them), which
 * every member had passed; its own ACKs move it on from there.
 *
 * Asking for ACKs.  When half the window is outstanding, a packet carries
 * IBMC_MCAST_F_ACK_REQ, at most once per quarter window, so that a root
 * whose members are all behind their skewed turns does not stall.
 *
 * Pure logic, unit-tested on the host (test/unit/test_mcast_tx.c,
 * test_mcast_sim.c). */

#ifndef IBMC_MCAST_TX_H_INCLUDED
#define IBMC_MCAST_TX_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "ibmc_mcast_wire.h"

typedef struct {
    ibmc_mcast_id_t id;
    uint32_t payload_max;
    uint32_t window;            /* a power of two, as the receivers' */
    int nmembers;               /* the communicator's size */
    int self;                   /* this root's rank in it */
    uint32_t *acked;            /* per member: its last cumulative ACK */
    const unsigned char *ackers;        /* per member: acknowledges to this root (its
                                         * subgroup and the co-roots, ibmc_mcast_coroot.h);
                                         * NULL: every member */
    unsigned char *ring;        /* window slots of sizeof(hdr) + payload_max bytes */

    uint32_t next;              /* the next position to send */
    uint32_t min_acked;         /* the lowest ACK of any acker */
    int at_min;                 /* members whose ACK equals min_acked */
    uint32_t last_ack_req;      /* position of the last packet that asked for ACKs */
    int acked_ahead;            /* an ACK ahead of next came between messages */

    /* the message being sent */
    const unsigned char *data;
    uint64_t len;
    uint32_t nfrags;
    uint32_t sent;

    uint64_t packets;           /* fragments put in the ring and handed out: each one a
                                 * copy of the caller's data */
    uint64_t acks;              /* ACKs that moved a member on */
    uint64_t old_acks;          /* ACKs behind what the member had said */
    uint64_t bogus_acks;        /* ACKs beyond what was sent, or from no member */
    uint64_t retransmits;       /* packets handed out again for NAKs */
    uint64_t early_naks;        /* NAKs of positions not sent yet: a receiver that timed
                                 * out asks for its whole message, maybe before this
                                 * root has even begun it */
    uint64_t stale_naks;        /* NAKs of positions every member has since delivered */
    uint64_t bogus_naks;        /* NAKs of positions this root did not send, between
                                 * the ones it did: no correct receiver asks for them */
} ibmc_mcast_tx_t;

/* acked has nmembers entries and ring window x (sizeof(ibmc_mcast_hdr_t) +
 * payload_max) bytes, both owned by the caller.  The stream starts at 0. */
void ibmc_mcast_tx_init(ibmc_mcast_tx_t * tx, ibmc_mcast_id_t id, uint32_t payload_max,
                        uint32_t window, int nmembers, int self, uint32_t * acked,
                        unsigned char *ring);

/* Only the members with ackers[m] set acknowledge to this root: with
 * co-roots, the others' ACKs reach it through their co-root's aggregate.
 * ackers (nmembers entries, owned by the caller) stays in use; NULL makes
 * every member an acker again. */
void ibmc_mcast_tx_set_ackers(ibmc_mcast_tx_t * tx, const unsigned char *ackers);

/* Start sending a message of len bytes (len > 0) at stream position first
 * (ibmc_mcast_rx_own's answer), with released taken from this process's
 * receive side (rx->released).  data must stay valid until
 * ibmc_mcast_tx_sent_all(). */
void ibmc_mcast_tx_begin(ibmc_mcast_tx_t * tx, uint32_t first, uint32_t released,
                         const void *data, uint64_t len);

/* The next packet to send, if the window allows: returns 1 and sets *pkt and
 * *len to the packet in the ring; 0 when the message is all sent or the
 * window is full (progress ACKs, then call again). */
int ibmc_mcast_tx_next(ibmc_mcast_tx_t * tx, const void **pkt, size_t * len);

/* Every fragment is in the ring: the root's MPI_Bcast may return. */
static inline int ibmc_mcast_tx_sent_all(const ibmc_mcast_tx_t * tx)
{
    return tx->sent == tx->nfrags;
}

/* The window is full: nothing more goes out until an ACK arrives. */
static inline int ibmc_mcast_tx_blocked(const ibmc_mcast_tx_t * tx)
{
    return ibmc_mcast_seq_diff(tx->next, tx->min_acked) >= (int32_t) tx->window;
}

/* Member `member` has delivered every position below `pos`.  Returns 0, or
 * -1 for an ACK no correct member sends (counted as bogus_acks): from no
 * member, from the root itself or a member that is not an acker, or past
 * the message being sent.  Between
 * two messages an ACK may be ahead of next: a member that entered the
 * root's next broadcast first says where it is (ibmc_mcast_rx_post);
 * ibmc_mcast_tx_begin keeps it if it is not past the message's start. */
int ibmc_mcast_tx_ack(ibmc_mcast_tx_t * tx, int member, uint32_t pos);

/* The members a root asks for an ACK, up to max of them into out[];
 * returns how many, 0 when every member has acknowledged all it sent.  With
 * the window full, the ones holding it back (their ACK is the lowest): a
 * member that lost packets there has seen the later ones and NAKed.
 * Otherwise every member that has not acknowledged all: the one that lost
 * a whole last message need not be the lowest, and asking the lowest alone
 * would find it only after several doubled waits.  A root whose window has
 * stayed full,
 * or whose last packets have stayed unacknowledged, asks them over RC
 * (ibmc_mcast_engine.c): a live member answers with an ACK, and NAKs what
 * it lost; a dead one fails the reliable connection, which names it. */
int ibmc_mcast_tx_laggards(const ibmc_mcast_tx_t * tx, int *out, int max);

/* The root's question to the whole group (IBMC_MCAST_ASK): a header alone,
 * saying it has sent every position below next; with want_acks, asking
 * every member for its ACK too. */
void ibmc_mcast_tx_ask(const ibmc_mcast_tx_t * tx, int want_acks, ibmc_mcast_hdr_t * h);

/* The ring's copy of position pos for a retransmission: 1 and *pkt, *len,
 * or 0 when pos is not held: not sent yet (early_naks), delivered by every
 * member since the NAK was sent (stale_naks), or another root's (bogus_naks).  The copy is the
 * multicast packet as sent; the caller sets IBMC_MCAST_F_RETRANSMIT in the
 * copy it sends over RC. */
int ibmc_mcast_tx_lookup(ibmc_mcast_tx_t * tx, uint32_t pos, const void **pkt, size_t * len);

#endif /* IBMC_MCAST_TX_H_INCLUDED */
