/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Co-roots (seed 000 §4.3): the members of a communicator's multicast
 * stream are split, for each root, into subgroups of s consecutive members
 * (counted from the root).  The first member of a subgroup is its head: the
 * root for subgroup 0, a co-root for the others.  Then
 *   - a co-root receives every packet of the root's messages reliably, over
 *     RC, relayed down a tree of the heads (seed 000 §4.3 step 2), besides
 *     by multicast; whichever comes first is delivered.  The tree is binary
 *     (IBMC_MCAST_RELAY_FANOUT), not the seed's binomial one: a binomial
 *     root relays every packet to log2(n/s) co-roots, so its work would
 *     grow with the node count, while here the root and every co-root
 *     relay to at most 2, at the same depth, floor(log2(n/s));
 *   - a co-root keeps a copy of every such packet and answers its
 *     subgroup's NAKs from it, so the root retransmits only to its own
 *     subgroup and to co-roots;
 *   - the other members of a subgroup (its leaves) acknowledge to their
 *     head; a co-root acknowledges, to its parent in the relay tree (the
 *     root or a co-root), the lowest position that it, its leaves and the
 *     co-roots below it have delivered.  The root so hears from s - 1
 *     leaves and its children in the relay tree, at most 2, instead of
 *     n - 1 members (or n/s - 1 co-roots if every co-root
 *     reported to it), and its window (flow control, ibmc_mcast_tx.h)
 *     still never passes a member that is behind: a co-root's ACK covers
 *     its subtree.
 * Seed 000 §4.3 decouples a co-root's ACK collection from the root entirely;
 * here the aggregate goes up so that the root's flow control, which credits
 * every receiver's slots (seed 000 §5.4), keeps covering every member.
 *
 * What a child co-root reports is its subtree's under one root, and a pair
 * of processes can be parent and child under several roots with different
 * subtrees: those ACKs travel as RC messages naming the root, and the parent
 * keeps them by root and child (child_acked).  A co-root whose parent is the
 * root itself reports as every other ACK to a root does (its board word, or
 * an RC message without a root): under any other root the same pair reports
 * by RC naming that root, so what arrives without one is always the
 * aggregate for the receiver's own messages.
 *
 * s >= n is one subgroup: every member acknowledges to the root, as with no
 * co-roots at all.
 *
 * The relay store (ibmc_mcast_relay_t) is a co-root's side: the ring of
 * packets it keeps for its leaves and the ACKs they sent it.  A slot is
 * rewritten a window after its position, when the root has heard (through
 * this co-root's aggregate) that every leaf has delivered it: no leaf can
 * still ask for it.
 *
 * Pure logic, unit-tested on the host (test/unit/test_mcast_coroot.c,
 * test_mcast_sim.c). */

#ifndef IBMC_MCAST_COROOT_H_INCLUDED
#define IBMC_MCAST_COROOT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "ibmc_mcast_wire.h"

/* Children per head in the relay tree: subgroup g's are K*g + 1 .. K*g + K.
 * 2 keeps the tree as deep as a binomial one and the root's sends per
 * packet at 3 whatever the node count. */
#define IBMC_MCAST_RELAY_FANOUT 2

/* The subgroups of one root's messages. */
typedef struct {
    int n;                      /* members of the communicator */
    int s;                      /* subgroup size, at least 1 */
    int root;
} ibmc_mcast_plan_t;

static inline ibmc_mcast_plan_t ibmc_mcast_plan(int n, int s, int root)
{
    ibmc_mcast_plan_t p = {.n = n,.s = s < 1 ? 1 : s,.root = root };
    return p;
}

/* Number of subgroups, root's included. */
static inline int ibmc_mcast_plan_groups(const ibmc_mcast_plan_t * p)
{
    return (p->n + p->s - 1) / p->s;
}

/* The head of member m's subgroup: the root or a co-root. */
int ibmc_mcast_plan_head(const ibmc_mcast_plan_t * p, int m);

static inline int ibmc_mcast_plan_is_coroot(const ibmc_mcast_plan_t * p, int m)
{
    return m != p->root && ibmc_mcast_plan_head(p, m) == m;
}

/* Where member m sends its ACKs and NAKs: its head if it is a leaf, its
 * parent in the relay tree if it is a co-root; -1 for the root itself. */
int ibmc_mcast_plan_ack_to(const ibmc_mcast_plan_t * p, int m);

/* The head that relays the root's packets to co-root m (the root or
 * another co-root), or -1 when m is not a co-root. */
int ibmc_mcast_plan_parent(const ibmc_mcast_plan_t * p, int m);

/* The co-roots that head h (the root or a co-root) relays every packet to,
 * at most max of them into out[]; returns how many. */
int ibmc_mcast_plan_children(const ibmc_mcast_plan_t * p, int h, int *out, int max);

/* How many children a head can have in a plan of n members and subgroups
 * of s: IBMC_MCAST_RELAY_FANOUT, fewer when there are fewer other
 * subgroups; child_acked keeps that many per root. */
int ibmc_mcast_plan_child_slots(int n, int s);

/* Which of head h's children co-root m is (0 .. child_slots - 1), or -1
 * when m is not a child of h. */
int ibmc_mcast_plan_child_slot(const ibmc_mcast_plan_t * p, int h, int m);

/* May member `from` send the root's packets to member `to` over RC?  The
 * root may, to anyone (its retransmissions, its relays); a head, to its
 * leaves (retransmissions); a relay parent, to its child co-roots. */
int ibmc_mcast_plan_may_send(const ibmc_mcast_plan_t * p, int from, int to);

/* A leaf's NAK that came before the co-root had the packet: answered when
 * the packet arrives (by relay, at most a relay hop later, or as the answer
 * to the co-root's own NAK), instead of after the leaf's NAK timeout. */
typedef struct {
    int member;
    int root;                   /* whose message the asker took pos for */
    uint32_t pos;
    int timed;                  /* asked by a timeout NAK, which does not prove
                                 * the packet was sent */
} ibmc_mcast_waiter_t;

#define IBMC_MCAST_RELAY_WAITERS 64

/* A co-root's store of the packets it relays and of its leaves' ACKs. */
typedef struct {
    int nmembers, self;
    uint32_t window;            /* a power of two: the stream's window */
    uint32_t payload_max;
    unsigned char *ring;        /* window slots of sizeof(hdr) + payload_max bytes */
    int *ring_root;             /* by slot: the root of the packet in it, -1 for none */
    uint32_t *leaf_acked;       /* by member: the last ACK it sent this process */
    uint32_t *child_acked;      /* by root and child slot: the child co-root's last
                                 * aggregate for that root */
    int child_slots;            /* per root (ibmc_mcast_plan_child_slots) */
    uint32_t *agg_sent;         /* by root: the last aggregate acknowledged to it */
    unsigned char *owed;        /* by root: an ACK is owed to it, sent as the leaves catch up */
    ibmc_mcast_waiter_t waiters[IBMC_MCAST_RELAY_WAITERS];
    int nwaiters;

    uint64_t kept;              /* packets copied into the ring */
    uint64_t served;            /* packets looked up for a leaf's NAK */
    uint64_t misses;            /* NAKed positions the ring did not hold */
    uint64_t waits;             /* of those, remembered until the packet comes */
    uint64_t leaf_acks;         /* ACKs that moved a member on */
    uint64_t child_acks;        /* child co-roots' aggregates that moved one on */
    uint64_t bogus_acks;        /* ACKs from no member or from this process */
} ibmc_mcast_relay_t;

/* ring has window x (sizeof(ibmc_mcast_hdr_t) + payload_max) bytes,
 * ring_root window entries, leaf_acked, agg_sent and owed nmembers each,
 * child_acked nmembers x child_slots, all owned by the caller. */
void ibmc_mcast_relay_init(ibmc_mcast_relay_t * r, int nmembers, int self, uint32_t window,
                           uint32_t payload_max, unsigned char *ring, int *ring_root,
                           uint32_t * leaf_acked, uint32_t * child_acked, int child_slots,
                           uint32_t * agg_sent, unsigned char *owed);

/* Keep a copy of a packet this process accepted (a new position, checked by
 * ibmc_mcast_rx_packet) from `root`'s message.  Returns the slot's copy. */
const void *ibmc_mcast_relay_keep(ibmc_mcast_relay_t * r, const void *pkt, size_t len, int root);

/* The kept copy of position pos of root's message: 1 with *pkt and *len, or
 * 0 (counted as a miss) when the ring does not hold it, or holds it as
 * another root's.  A packet is kept as its sender's before the message is
 * posted (ibmc_mcast_rx_packet holds it unchecked); one that a member sent
 * for another root's message is refused when the message is posted, and its
 * copy here must not answer a NAK either (the asker's plan would refuse it,
 * and the asker would ask in vain). */
int ibmc_mcast_relay_lookup(ibmc_mcast_relay_t * r, uint32_t pos, int root, const void **pkt,
                            size_t * len);

/* Remember that member m asked for position pos, which the ring does not
 * hold yet: by a gap NAK (timed 0: a later packet came, so pos was sent)
 * or by a timeout NAK (timed 1).  Returns 1, or 0 when the list is full
 * (the leaf asks again after its NAK timeout). */
int ibmc_mcast_relay_wait(ibmc_mcast_relay_t * r, int m, int root, uint32_t pos, int timed);

/* The members waiting for position pos (just kept, of root's message), at
 * most max of them into out[]; returns how many, and forgets them.  One
 * that took pos for another root's gets nothing: its plan would refuse the
 * copy.  A timed waiter is
 * answered only if the packet came here as the answer to a NAK of this
 * co-root's own (answered 1): it was sent and lost here, and most likely
 * at the leaf too.  One that came by multicast or relay likely reached the
 * leaf as well (its NAK was early), and the leaf asks again if not.
 * Waiters for positions a window or more behind pos are forgotten too:
 * every member has them. */
int ibmc_mcast_relay_waiters(ibmc_mcast_relay_t * r, int root, uint32_t pos, int answered,
                             int *out, int max);

/* Member m says it has delivered every position below pos.  Returns 1 when
 * that moved it on, 0 when not, -1 for an ACK no correct member sends here
 * (counted as bogus_acks). */
int ibmc_mcast_relay_leaf_ack(ibmc_mcast_relay_t * r, int m, uint32_t pos);

/* Child co-root m's aggregate for plan p's root: pos.  Returns 1 when that
 * moved it on, 0 when not, -1 when m is not a child of this process under
 * p (counted as bogus_acks). */
int ibmc_mcast_relay_child_ack(ibmc_mcast_relay_t * r, const ibmc_mcast_plan_t * p, int m,
                               uint32_t pos);

/* The lowest position that this process (next: its own first undelivered),
 * every leaf of its subgroup and every child co-root's subtree under plan p
 * has delivered.  An ACK older than `released` (every member had passed
 * it, says the root) counts as released.  The members below next, up to
 * max of them, go to out[] and their number to *nlag (out may be NULL):
 * every one of them, not only the lowest, since one that lost a whole
 * message need not be the lowest when its co-root is asked; child
 * co-roots before leaves. */
uint32_t ibmc_mcast_relay_aggregate(const ibmc_mcast_relay_t * r, const ibmc_mcast_plan_t * p,
                                    uint32_t next, uint32_t released, int *out, int max,
                                    int *nlag);

/* Should aggregate agg for root's messages go to this co-root's parent
 * now?  When it moved on since the last one sent, and either it moved by at
 * least half of ack_every positions, or an ACK is owed (the co-root's own skewed
 * turn, or its parent asked) and agg covers next, this process's own first
 * undelivered position.  With ack_every 0 (ACKs only when asked) an owed
 * one goes as soon as it moved.  ibmc_mcast_relay_sent() records the send. */
int ibmc_mcast_relay_due(const ibmc_mcast_relay_t * r, int root, uint32_t agg, uint32_t next,
                         uint32_t ack_every);

/* agg went to root; an owed ACK is paid once it covers all of next. */
void ibmc_mcast_relay_sent(ibmc_mcast_relay_t * r, int root, uint32_t agg, uint32_t next);

#endif /* IBMC_MCAST_COROOT_H_INCLUDED */
