/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* A randomized simulation of one communicator's multicast stream: members
 * that take turns as root (ibmc_mcast_tx) and receive everyone else's
 * broadcasts (ibmc_mcast_rx), joined by a multicast network that drops,
 * duplicates and reorders packets and by reliable, in-order RC channels
 * that carry ACKs, NAKs, retransmissions and, with co-roots
 * (ibmc_mcast_coroot.h), the relays to co-roots and their aggregated ACKs.  An adversary also injects
 * packets from the wrong member, from another job, from an earlier epoch of
 * the group and truncated ones, and, with co-roots, relays from members the
 * plan does not let pass them on (all refused).  Members enter each broadcast after a
 * random delay (skew), as processes do.
 *
 * With boards, ACKs travel as the netmod's RDMA writes do
 * (ibmc_mcast_board.h): in order on their RC channel, but landing in the
 * owner's board word for the writer, which the owner reads only on its own
 * turns, so unread ACKs are overwritten; an ACK equal to the last one to
 * the same owner is not sent, unless the owner asked.  The adversary then
 * also writes words of an earlier epoch, as a member of an earlier channel
 * on the same board would; the owner asks that member again.
 *
 * Every run must show:
 *   - every member delivers every message bit-exact, in order, exactly once
 *     (fragments delivered = fragments of the messages it did not send);
 *   - no forged packet is ever delivered, and each is counted under its
 *     reason;
 *   - no receiver ever sees a correct sender's packet beyond its window, and
 *     no root ever has more than a window outstanding;
 *   - no root gets an ACK it must refuse or a NAK for a position it never
 *     held;
 *   - the stream never stalls: everything finishes within the step budget.
 * Each configuration runs several seeds; a failure prints the seed. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_mcast_rx.h"
#include "ibmc_mcast_tx.h"
#include "ibmc_mcast_coroot.h"
#include "ibmc_mcast_board.h"
#include "tap.h"
#include "rng.h"

#define P 24                    /* payload bytes per fragment */
#define PKT_MAX (sizeof(ibmc_mcast_hdr_t) + P)
#define MAXN 9
#define NAK_MAX 8
#define WINDOW_MAX 64

static const ibmc_mcast_id_t id = {.job_key = 0xfeedfacecafebeefULL, .context_id = 4, .epoch = 2 };

typedef struct {
    int members;
    uint32_t window;
    uint32_t ack_every;
    int messages;
    uint64_t max_len;           /* message lengths are 0 .. max_len */
    double drop, dup, reorder, forge;
    int max_skew;               /* steps a member may wait before a broadcast */
    int subgroup;               /* co-roots' subgroup size; 0: none */
    int nak_idle;               /* a member's steps without progress before it asks for
                                 * everything it lacks; 0: 40 */
    int boards;                 /* ACKs by RDMA write into boards */
} config_t;

/* One packet in flight, multicast or RC. */
enum { MSG_MCAST, MSG_ACK, MSG_NAK, MSG_RETRANSMIT, MSG_RELAY, MSG_ACK_REQ };
typedef struct {
    int kind;
    int src, dst;
    int forged;                 /* the adversary's */
    uint32_t a, b;              /* ACK position, NAK range */
    int root;                   /* NAK, retransmission, relay: whose message */
    int gap;                    /* NAK: of a gap (the packets were sent) */
    size_t len;
    unsigned char pkt[PKT_MAX];
} msg_t;

typedef struct {
    msg_t *v;
    int n, cap;
} queue_t;

static void push(queue_t * q, const msg_t * m)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 64;
        q->v = realloc(q->v, sizeof(msg_t) * q->cap);
    }
    q->v[q->n++] = *m;
}

static msg_t take(queue_t * q, int i)
{
    msg_t m = q->v[i];
    memmove(&q->v[i], &q->v[i + 1], sizeof(msg_t) * (q->n - i - 1));
    q->n--;
    return m;
}

typedef struct {
    ibmc_mcast_rx_t rx;
    ibmc_mcast_slot_t *slots;
    unsigned char *slot_mem;
    ibmc_mcast_tx_t tx;
    uint32_t acked[MAXN];
    unsigned char *ring;
    unsigned char ackers[MAXN]; /* who acknowledges to it as root */
    ibmc_mcast_relay_t relay;
    unsigned char *relay_ring;
    int relay_ring_root[WINDOW_MAX];
    uint32_t leaf_acked[MAXN], agg_sent[MAXN];
    unsigned char owed[MAXN];
    int relay_root;             /* root of the last packet it relayed */
    uint64_t board_words[MAXN], board_seen[MAXN];
    ibmc_mcast_board_t board;
    uint32_t said[MAXN];        /* the last ACK it sent to each */
    int k;                      /* the broadcast it is in or enters next */
    int in_bcast;
    int delay;
    int idle;
    unsigned char *buf;
    uint64_t frags_expected;
    uint64_t forged_by_reason[IBMC_MCAST_RX_NVERDICTS];
} member_t;

typedef struct {
    const config_t *c;
    rng_t rng;
    member_t m[MAXN];
    uint64_t *len;
    int *root;
    queue_t mcast;              /* in flight on the multicast network */
    queue_t rc[MAXN][MAXN];     /* reliable channels, in order per pair */
    uint64_t steps;
    int overrun;                /* a root beyond its window */
    int forged_delivered;
    uint64_t naks, acks, drops, relays;
    int bad_relay;              /* RC copies refused: from a member the plan does not allow */
    int forged_relays;          /* the adversary's RC copies, from such members */
    uint64_t acks_coalesced;    /* board words overwritten before they were read */
    uint64_t late_writes;       /* the adversary's words of an earlier epoch */
    char why[200];
} sim_t;

static unsigned char byte_of(int k, uint64_t i)
{
    return (unsigned char) ((k + 1) * 131 + i * 29 + (i >> 8));
}

static int chance(sim_t * s, double p)
{
    return p > 0 && rng_unit(&s->rng) < p;
}

static ibmc_mcast_plan_t plan_of(const sim_t * s, int root)
{
    return ibmc_mcast_plan(s->c->members, s->c->subgroup ? s->c->subgroup : s->c->members, root);
}

static void rc_send(sim_t * s, int src, int dst, int kind, uint32_t a, uint32_t b, int root,
                    const void *pkt, size_t len)
{
    msg_t m = {.kind = kind,.src = src,.dst = dst,.a = a,.b = b,.root = root,.len = len };
    if (pkt)
        memcpy(m.pkt, pkt, len);
    push(&s->rc[src][dst], &m);
}

/* An ACK of pos from `who` to `to`; with boards, not again if it says what
 * the last one said, unless asked. */
static void send_ack(sim_t * s, int who, int to, uint32_t pos, int asked)
{
    member_t *me = &s->m[who];
    if (s->c->boards && !asked && me->said[to] == pos)
        return;
    me->said[to] = pos;
    rc_send(s, who, to, MSG_ACK, pos, 0, -1, NULL, 0);
    s->acks++;
}

/* A head (root or co-root) passes a packet of root's message on, over RC,
 * to the co-roots below it. */
static void relay(sim_t * s, int who, int root, const void *pkt, size_t len)
{
    ibmc_mcast_plan_t p = plan_of(s, root);
    int kids[MAXN], k = ibmc_mcast_plan_children(&p, who, kids, MAXN);
    for (int i = 0; i < k; i++) {
        rc_send(s, who, kids[i], MSG_RELAY, 0, 0, root, pkt, len);
        s->relays++;
        /* the adversary: the same copy from a member that may not pass it on */
        int x = (int) rng_below(&s->rng, s->c->members);
        if (chance(s, s->c->forge) && x != kids[i] && !ibmc_mcast_plan_may_send(&p, x, kids[i])) {
            rc_send(s, x, kids[i], MSG_RELAY, 0, 0, root, pkt, len);
            s->forged_relays++;
        }
    }
}

/* The root multicasts one packet: every other member gets 0, 1 or 2 copies. */
static void mcast_send(sim_t * s, int root, const void *pkt, size_t len)
{
    for (int d = 0; d < s->c->members; d++) {
        if (d == root)
            continue;
        int copies = chance(s, s->c->drop) ? 0 : 1 + chance(s, s->c->dup);
        s->drops += copies == 0;
        for (int i = 0; i < copies; i++) {
            msg_t m = {.kind = MSG_MCAST,.src = root,.dst = d,.len = len };
            memcpy(m.pkt, pkt, len);
            push(&s->mcast, &m);
        }
        if (chance(s, s->c->forge)) {
            /* the adversary: a copy that fails one check or another */
            msg_t m = {.kind = MSG_MCAST,.src = root,.dst = d,.len = len,.forged = 1 };
            memcpy(m.pkt, pkt, len);
            ibmc_mcast_hdr_t h;
            memcpy(&h, m.pkt, sizeof(h));
            switch (rng_below(&s->rng, 4)) {
                case 0:        /* from another member: the completion says so */
                    m.src = (root + 1 + (int) rng_below(&s->rng, s->c->members - 1)) % s->c->members;
                    if (m.src == d)
                        m.src = -1;     /* or from outside the communicator */
                    break;
                case 1:
                    h.job_key ^= 1;
                    break;
                case 2:
                    h.epoch--;
                    break;
                case 3:
                    m.len -= 1 + rng_below(&s->rng, m.len);
                    break;
            }
            memcpy(m.pkt, &h, sizeof(h));
            push(&s->mcast, &m);
        }
    }
}

/* A co-root's aggregated ACK to root, if one is due. */
static void report_asked(sim_t * s, int who, int root, int asked);
static void report(sim_t * s, int who, int root)
{
    report_asked(s, who, root, 0);
}

static void report_asked(sim_t * s, int who, int root, int asked)
{
    member_t *me = &s->m[who];
    ibmc_mcast_plan_t p = plan_of(s, root);
    if (root < 0 || !ibmc_mcast_plan_is_coroot(&p, who))
        return;
    uint32_t agg = ibmc_mcast_relay_aggregate(&me->relay, &p, me->rx.next, me->rx.released,
                                              NULL, 0, NULL);
    /* asked: the root may have lost the last one to a late write */
    if (asked || ibmc_mcast_relay_due(&me->relay, root, agg, s->c->ack_every)) {
        send_ack(s, who, root, agg, asked);
        ibmc_mcast_relay_sent(&me->relay, root, agg, me->rx.next);
    }
}

static void deliver(sim_t * s, const msg_t * q)
{
    member_t *me = &s->m[q->dst];
    int src = q->src;
    if (q->kind != MSG_MCAST) {
        /* an RC copy names its root; the plan says who may send it */
        ibmc_mcast_plan_t p = plan_of(s, q->root);
        if (q->root < 0 || q->root >= s->c->members || !ibmc_mcast_plan_may_send(&p, q->src, q->dst)) {
            s->bad_relay++;
            return;
        }
        src = q->root;
    }
    ibmc_mcast_rx_verdict_t v = ibmc_mcast_rx_packet(&me->rx, q->pkt, q->len, src);
    if ((v == IBMC_MCAST_RX_DELIVERED || v == IBMC_MCAST_RX_HELD) && src >= 0) {
        ibmc_mcast_plan_t p = plan_of(s, src);
        if (ibmc_mcast_plan_is_coroot(&p, q->dst)) {
            const void *kept = ibmc_mcast_relay_keep(&me->relay, q->pkt, q->len, src);
            ibmc_mcast_hdr_t h;
            memcpy(&h, kept, sizeof(h));
            me->relay_root = src;
            relay(s, q->dst, src, kept, q->len);
            int waiting[MAXN], n = ibmc_mcast_relay_waiters(&me->relay, h.seq, waiting, MAXN);
            for (int i = 0; i < n; i++) {
                unsigned char copy[PKT_MAX];
                memcpy(copy, kept, q->len);
                ((ibmc_mcast_hdr_t *) copy)->flags |= IBMC_MCAST_F_RETRANSMIT;
                rc_send(s, q->dst, waiting[i], MSG_RETRANSMIT, 0, 0, src, copy, q->len);
            }
        }
    }
    if (q->forged) {
        me->forged_by_reason[v]++;
        if (v == IBMC_MCAST_RX_DELIVERED)
            s->forged_delivered++;
    }
    me->idle = 0;
}

/* An ACK from `from` reaches `who`, by message or read off its board. */
static void ack_in(sim_t * s, int who, int from, uint32_t pos)
{
    member_t *me = &s->m[who];
    if (me->ackers[from])
        ibmc_mcast_tx_ack(&me->tx, from, pos);
    if (ibmc_mcast_relay_leaf_ack(&me->relay, from, pos) > 0) {
        report(s, who, me->rx.ack_root);
        if (me->relay_root != me->rx.ack_root)
            report(s, who, me->relay_root);
    }
}

/* The owner's look at its board: what changed is an ACK; a late write of
 * an earlier channel may have covered one, so its member is asked again. */
static void read_board(sim_t * s, int who)
{
    member_t *me = &s->m[who];
    for (int m = 0; m < s->c->members; m++) {
        uint32_t pos;
        int k = m == who ? 0 : ibmc_mcast_board_take(&me->board, m, &pos);
        if (k > 0)
            ack_in(s, who, m, pos);
        else if (k < 0)
            rc_send(s, who, m, MSG_ACK_REQ, 0, 0, -1, NULL, 0);
    }
}

static void serve_rc(sim_t * s, const msg_t * q)
{
    member_t *me = &s->m[q->dst];
    switch (q->kind) {
        case MSG_ACK:
            if (s->c->boards) {
                uint64_t *w = &me->board_words[q->src];
                s->acks_coalesced += *w != me->board_seen[q->src];
                *w = ibmc_mcast_board_word(id.epoch, q->a);
                /* the adversary: a member of an earlier channel writes late */
                if (chance(s, s->c->forge)) {
                    int x = (int) rng_below(&s->rng, s->c->members);
                    me->board_words[x] = ibmc_mcast_board_word(id.epoch - 1,
                                                               (uint32_t) rng_next(&s->rng));
                    s->late_writes++;
                }
                break;
            }
            ack_in(s, q->dst, q->src, q->a);
            break;
        case MSG_ACK_REQ:{
                /* an ACK now, even if it says nothing new; a co-root answers
                 * the asker for its subgroup */
                ibmc_mcast_plan_t p = plan_of(s, q->src);
                if (ibmc_mcast_plan_is_coroot(&p, q->dst)) {
                    me->relay.owed[q->src] = 1;
                    report_asked(s, q->dst, q->src, 1);
                } else {
                    /* not taken from the skewed schedule: the asker need
                     * not be where the next due ACK goes */
                    send_ack(s, q->dst, q->src, me->rx.next, 1);
                }
                break;
            }
        case MSG_NAK:
            for (uint32_t i = 0; i < q->b; i++) {
                const void *pkt;
                size_t len;
                int root = q->root;
                if (q->root != q->dst && !ibmc_mcast_relay_lookup(&me->relay, q->a + i, &pkt,
                                                                  &len, &root)) {
                    if (q->gap)
                        ibmc_mcast_relay_wait(&me->relay, q->src, q->a + i);
                    continue;
                }
                if (q->root != q->dst || ibmc_mcast_tx_lookup(&me->tx, q->a + i, &pkt, &len)) {
                    unsigned char copy[PKT_MAX];
                    memcpy(copy, pkt, len);
                    ((ibmc_mcast_hdr_t *) copy)->flags |= IBMC_MCAST_F_RETRANSMIT;
                    rc_send(s, q->dst, q->src, MSG_RETRANSMIT, 0, 0, root, copy, len);
                }
            }
            break;
        case MSG_RELAY:
        case MSG_RETRANSMIT:
            deliver(s, q);
            break;
    }
}

static void send_naks(sim_t * s, int who, int all)
{
    member_t *me = &s->m[who];
    ibmc_mcast_plan_t rp = plan_of(s, me->rx.root);
    /* a co-root gets every packet by relay: a gap is a relay on its way */
    if (!all && ibmc_mcast_plan_is_coroot(&rp, who))
        return;
    ibmc_mcast_range_t r[NAK_MAX];
    int n = ibmc_mcast_rx_missing(&me->rx, all, r, NAK_MAX);
    ibmc_mcast_plan_t p = plan_of(s, me->rx.root);
    int to = ibmc_mcast_plan_ack_to(&p, who);
    for (int i = 0; i < n; i++) {
        rc_send(s, who, to, MSG_NAK, r[i].first, r[i].count, me->rx.root, NULL, 0);
        s->rc[who][to].v[s->rc[who][to].n - 1].gap = !all;
        s->naks++;
    }
}

/* One member's turn: enter, send, complete, acknowledge, NAK. */
static void member_step(sim_t * s, int who)
{
    member_t *me = &s->m[who];
    const config_t *c = s->c;
    /* as the netmod: only a root with packets not yet acknowledged, or any
     * member when there are co-roots, looks at its board */
    if (c->boards && ((c->subgroup && c->subgroup < c->members) ||
                      ibmc_mcast_seq_diff(me->tx.next, me->tx.min_acked) > 0))
        read_board(s, who);
    if (!me->in_bcast && me->k < c->messages) {
        if (me->delay > 0) {
            me->delay--;
        } else {
            int k = me->k;
            uint64_t len = s->len[k];
            me->in_bcast = 1;
            me->idle = 0;
            if (s->root[k] == who) {
                for (uint64_t i = 0; i < len; i++)
                    me->buf[i] = byte_of(k, i);
                uint32_t first = ibmc_mcast_rx_own(&me->rx, len, who);
                if (len)
                    ibmc_mcast_tx_begin(&me->tx, first, me->rx.released, me->buf, len);
            } else {
                memset(me->buf, 0xee, c->max_len);
                me->frags_expected += ibmc_mcast_nfrags(len, P);
                if (ibmc_mcast_rx_post(&me->rx, me->buf, len, s->root[k]) != IBMC_MCAST_RX_DELIVERED)
                    snprintf(s->why, sizeof(s->why), "member %d: post of message %d failed", who, k);
            }
        }
    }
    if (me->in_bcast) {
        int k = me->k;
        if (s->root[k] == who) {
            const void *pkt;
            size_t len;
            for (int burst = 1 + (int) rng_below(&s->rng, 3); burst > 0 && s->len[k]; burst--) {
                if (!ibmc_mcast_tx_next(&me->tx, &pkt, &len))
                    break;
                if ((uint32_t) ibmc_mcast_seq_diff(me->tx.next, me->tx.min_acked) > c->window)
                    s->overrun = 1;
                mcast_send(s, who, pkt, len);
                relay(s, who, who, pkt, len);
            }
            if (!s->len[k] || ibmc_mcast_tx_sent_all(&me->tx)) {
                me->in_bcast = 0;
                me->k++;
                me->delay = (int) rng_below(&s->rng, c->max_skew + 1);
            }
        } else if (ibmc_mcast_rx_complete(&me->rx)) {
            for (uint64_t i = 0; i < s->len[k]; i++)
                if (me->buf[i] != byte_of(k, i)) {
                    snprintf(s->why, sizeof(s->why), "member %d, message %d: byte %llu is %u, not %u",
                             who, k, (unsigned long long) i, me->buf[i], byte_of(k, i));
                    break;
                }
            me->in_bcast = 0;
            me->k++;
            me->delay = (int) rng_below(&s->rng, c->max_skew + 1);
        } else {
            send_naks(s, who, 0);
            /* the NAK timeout: a stalled message asks for all it misses */
            if (++me->idle > (c->nak_idle ? c->nak_idle : 40)) {
                send_naks(s, who, 1);
                me->idle = 0;
            }
        }
    }
    if (ibmc_mcast_rx_ack_due(&me->rx) && me->rx.ack_root >= 0 && me->rx.ack_root != who) {
        int root = me->rx.ack_root;
        ibmc_mcast_plan_t p = plan_of(s, root);
        uint32_t pos = ibmc_mcast_rx_ack_take(&me->rx);
        if (ibmc_mcast_plan_is_coroot(&p, who)) {
            /* a co-root's ACK speaks for its leaves too */
            me->relay.owed[root] = 1;
            report(s, who, root);
        } else {
            send_ack(s, who, ibmc_mcast_plan_ack_to(&p, who), pos, 0);
        }
    }
}

static int all_done(const sim_t * s)
{
    for (int i = 0; i < s->c->members; i++)
        if (s->m[i].k < s->c->messages || s->m[i].in_bcast)
            return 0;
    return 1;
}

static int run(const config_t * c, uint64_t seed, char *why, size_t why_len)
{
    static sim_t s;
    if (c->window > WINDOW_MAX) {
        snprintf(why, why_len, "window %u is above the simulation's %d", c->window, WINDOW_MAX);
        return 0;
    }
    memset(&s, 0, sizeof(s));
    s.c = c;
    rng_seed(&s.rng, seed);
    s.len = calloc(c->messages, sizeof(*s.len));
    s.root = calloc(c->messages, sizeof(*s.root));
    for (int k = 0; k < c->messages; k++) {
        /* mostly small, some of several windows */
        uint64_t r = rng_below(&s.rng, 8);
        s.len[k] = r == 0 ? 0 : r < 6 ? rng_below(&s.rng, 3 * P) : rng_below(&s.rng, c->max_len + 1);
        s.root[k] = (int) rng_below(&s.rng, c->members);
    }
    for (int i = 0; i < c->members; i++) {
        member_t *me = &s.m[i];
        me->slots = calloc(c->window, sizeof(*me->slots));
        me->slot_mem = calloc(c->window, P);
        me->ring = calloc(c->window, PKT_MAX);
        me->buf = calloc(c->max_len + 1, 1);
        me->relay_ring = calloc(c->window, PKT_MAX);
        me->relay_root = -1;
        ibmc_mcast_rx_init(&me->rx, id, P, c->window, c->ack_every, (uint32_t) i, me->slots,
                           me->slot_mem);
        ibmc_mcast_tx_init(&me->tx, id, P, c->window, c->members, i, me->acked, me->ring);
        ibmc_mcast_plan_t p = plan_of(&s, i);
        for (int m = 0; m < c->members; m++)
            me->ackers[m] = ibmc_mcast_plan_ack_to(&p, m) == i;
        ibmc_mcast_tx_set_ackers(&me->tx, me->ackers);
        ibmc_mcast_relay_init(&me->relay, c->members, i, c->window, P, me->relay_ring,
                              me->relay_ring_root, me->leaf_acked, me->agg_sent, me->owed);
        ibmc_mcast_board_init(&me->board, me->board_words, me->board_seen, c->members, id.epoch);
    }

    const uint64_t budget = 2000000;
    while (!all_done(&s) && s.steps < budget && !s.why[0]) {
        s.steps++;
        uint64_t r = rng_below(&s.rng, 10);
        if (r < 4 && s.mcast.n) {
            int i = chance(&s, c->reorder) ? (int) rng_below(&s.rng, s.mcast.n) : 0;
            msg_t q = take(&s.mcast, i);
            deliver(&s, &q);
        } else if (r < 7) {
            int a = (int) rng_below(&s.rng, c->members), b = (int) rng_below(&s.rng, c->members);
            if (s.rc[a][b].n) {
                msg_t q = take(&s.rc[a][b], 0);
                serve_rc(&s, &q);
            }
        } else {
            member_step(&s, (int) rng_below(&s.rng, c->members));
        }
    }

    int ok = 1;
#define CHECK(cond, ...) \
    do { if (ok && !(cond)) { ok = 0; snprintf(why, why_len, __VA_ARGS__); } } while (0)
    CHECK(!s.why[0], "%s", s.why);
    CHECK(all_done(&s), "stalled after %llu steps", (unsigned long long) s.steps);
    if (!all_done(&s))
        for (int i = 0; i < c->members; i++) {
            member_t *me = &s.m[i];
            tap_diag("    member %d: message %d%s (root %d, %llu B), rx next %u posted %d got %u/%u "
                     "released %u acked %u; tx next %u min %u sent %u/%u", i, me->k,
                     me->in_bcast ? " in" : "", me->k < c->messages ? s.root[me->k] : -1,
                     (unsigned long long) (me->k < c->messages ? s.len[me->k] : 0), me->rx.next,
                     me->rx.posted, me->rx.got, me->rx.nfrags, me->rx.released, me->rx.acked,
                     me->tx.next, me->tx.min_acked, me->tx.sent, me->tx.nfrags);
            for (int m = 0; m < c->members; m++)
                tap_diag("      from %d: acked %u, board word %llx (read %llx), last ACK sent "
                         "here %u, as leaf %u, aggregate sent %u owed %d",
                         m, me->acked[m], (unsigned long long) me->board_words[m],
                         (unsigned long long) me->board_seen[m], s.m[m].said[i], me->leaf_acked[m], me->agg_sent[m], me->owed[m]);
        }
    CHECK(!s.overrun, "a root had more than a window outstanding");
    CHECK(!s.forged_delivered, "%d forged packets delivered", s.forged_delivered);
    /* forged copies still in flight when the stream finished: deliver them
     * too, so that each is seen refused */
    for (int a = 0; a < c->members; a++)
        for (int b = 0; b < c->members; b++)
            while (s.rc[a][b].n) {
                msg_t q = take(&s.rc[a][b], 0);
                if (q.kind == MSG_RELAY || q.kind == MSG_RETRANSMIT)
                    deliver(&s, &q);
            }
    CHECK(s.bad_relay == s.forged_relays, "%d RC copies refused, %d forged", s.bad_relay,
          s.forged_relays);
    CHECK(!c->forge || !c->subgroup || c->subgroup >= c->members || s.forged_relays > 0,
          "the adversary forged no relay");
    CHECK((c->subgroup && c->subgroup < c->members) == (s.relays > 0),
          "%llu relays to co-roots with subgroups of %d", (unsigned long long) s.relays, c->subgroup);
    uint64_t forged = 0, retransmits = 0;
    for (int i = 0; i < c->members; i++) {
        member_t *me = &s.m[i];
        const uint64_t *n = me->rx.count, *f = me->forged_by_reason;
        CHECK(me->rx.frags_delivered == me->frags_expected, "member %d delivered %llu fragments, not %llu",
              i, (unsigned long long) me->rx.frags_delivered, (unsigned long long) me->frags_expected);
        CHECK(n[IBMC_MCAST_RX_OUT_OF_WINDOW] == f[IBMC_MCAST_RX_OUT_OF_WINDOW],
              "member %d: a correct packet beyond its window", i);
        CHECK(n[IBMC_MCAST_RX_MISMATCH] == 0, "member %d: length mismatch", i);
        CHECK(n[IBMC_MCAST_RX_FOREIGN] == f[IBMC_MCAST_RX_FOREIGN] &&
              n[IBMC_MCAST_RX_STALE_EPOCH] == f[IBMC_MCAST_RX_STALE_EPOCH] &&
              n[IBMC_MCAST_RX_MALFORMED] == f[IBMC_MCAST_RX_MALFORMED],
              "member %d: foreign/stale/malformed counts differ from what was injected", i);
        CHECK(me->relay.bogus_acks == 0, "member %d: %llu bogus ACKs as co-root", i,
              (unsigned long long) me->relay.bogus_acks);
        CHECK(me->tx.bogus_acks == 0 && me->tx.bogus_naks == 0,
              "member %d as root: %llu bogus ACKs, %llu bogus NAKs", i,
              (unsigned long long) me->tx.bogus_acks, (unsigned long long) me->tx.bogus_naks);
        for (int v = 0; v < IBMC_MCAST_RX_NVERDICTS; v++)
            forged += f[v];
        retransmits += me->tx.retransmits + me->relay.served;
    }
    CHECK(c->forge == 0 || forged > 0, "the adversary injected nothing");
    uint64_t foreign = 0;
    for (int i = 0; i < c->members; i++)
        foreign += s.m[i].board.foreign;
    CHECK(!c->boards || !c->forge || (s.late_writes > 0 && foreign > 0),
          "%llu late board writes, %llu read as foreign", (unsigned long long) s.late_writes,
          (unsigned long long) foreign);
    CHECK(!c->boards || c->members < 4 || s.acks_coalesced > 0,
          "no board ACK was ever overwritten before it was read");
    CHECK(c->drop == 0 || retransmits > 0, "losses but no retransmission");
    CHECK(c->drop > 0 || c->reorder > 0 || c->forge > 0 || retransmits == 0,
          "%llu retransmissions on a perfect network", (unsigned long long) retransmits);
    if (ok)
        tap_diag("  seed %llu: %d messages, %llu steps, %llu drops, %llu NAKs, %llu retransmitted, "
                 "%llu ACKs, %llu relayed, %llu forged dropped", (unsigned long long) seed,
                 c->messages, (unsigned long long) s.steps, (unsigned long long) s.drops,
                 (unsigned long long) s.naks, (unsigned long long) retransmits,
                 (unsigned long long) s.acks, (unsigned long long) s.relays,
                 (unsigned long long) forged);
#undef CHECK
    for (int i = 0; i < c->members; i++) {
        free(s.m[i].slots);
        free(s.m[i].slot_mem);
        free(s.m[i].ring);
        free(s.m[i].relay_ring);
        free(s.m[i].buf);
        for (int j = 0; j < c->members; j++)
            free(s.rc[i][j].v);
    }
    free(s.mcast.v);
    free(s.len);
    free(s.root);
    return ok;
}

int main(void)
{
    static const struct {
        const char *name;
        config_t c;
    } cases[] = {
        {"2 members, perfect network", {2, 4, 2, 200, 10 * P, 0, 0, 0, 0, 3, 0, 0, 0}},
        {"5 members, 10% loss, 5% duplicates, reordering",
         {5, 16, 4, 200, 40 * P, 0.10, 0.05, 0.5, 0, 20, 0, 0, 0}},
        {"8 members, 30% loss, 10% duplicates, full reordering, forged packets",
         {8, 8, 8, 150, 24 * P, 0.30, 0.10, 1.0, 0.05, 10, 0, 0, 0}},
        {"3 members, 1% loss, ACKs only when asked", {3, 64, 0, 200, 200 * P, 0.01, 0, 0.05, 0, 50, 0, 0, 0}},
        {"9 members, window of 2, every-member ACKs, loss and forgery",
         {9, 2, 1, 100, 6 * P, 0.05, 0.05, 0.3, 0.02, 5, 0, 0, 0}},
        {"8 members, co-roots every 2, perfect network: nothing sent again",
         {8, 16, 4, 200, 40 * P, 0, 0, 0, 0, 20, 2, 2000, 0}},
        {"8 members, co-roots every 2, 10% loss, duplicates, reordering",
         {8, 16, 4, 200, 40 * P, 0.10, 0.05, 0.5, 0, 20, 2, 0, 0}},
        {"9 members, co-roots every 3, 30% loss, forged packets",
         {9, 8, 8, 150, 24 * P, 0.30, 0.10, 1.0, 0.05, 10, 3, 0, 0}},
        {"7 members, every member a co-root, ACKs only when asked",
         {7, 32, 0, 150, 100 * P, 0.05, 0.02, 0.2, 0, 30, 1, 0, 0}},
        {"9 members, co-roots every 4, window of 2, every-member ACKs",
         {9, 2, 1, 100, 6 * P, 0.05, 0.05, 0.3, 0.02, 5, 4, 0, 0}},
        {"8 members, ACK boards, perfect network: nothing sent again",
         {8, 16, 4, 200, 40 * P, 0, 0, 0, 0, 20, 0, 2000, 1}},
        {"8 members, ACK boards, 30% loss, late writes of an earlier channel",
         {8, 8, 8, 150, 24 * P, 0.30, 0.10, 1.0, 0.05, 10, 0, 0, 1}},
        {"9 members, ACK boards, co-roots every 3, window of 2, every-member ACKs, late writes",
         {9, 2, 1, 100, 6 * P, 0.05, 0.05, 0.3, 0.02, 5, 3, 0, 1}},
        {"7 members, ACK boards, every member a co-root, ACKs only when asked",
         {7, 32, 0, 150, 100 * P, 0.05, 0.02, 0.2, 0, 30, 1, 0, 1}},
    };
    for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
        TAP_TEST(cases[t].name) {
            for (uint64_t seed = 1; seed <= 4; seed++) {
                char why[256] = "";
                if (!run(&cases[t].c, seed * 7919 + t, why, sizeof(why))) {
                    TAP_FAIL(why);
                    tap_diag("    seed %llu", (unsigned long long) (seed * 7919 + t));
                    break;
                }
            }
        }
    }
    return tap_done();
}
