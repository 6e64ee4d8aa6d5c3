/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* A randomized simulation of one communicator's multicast stream, run by
 * the channel's own protocol engine (ibmc_mcast_engine.h): every member is
 * an engine whose operations reach a fake network.  Members take turns as
 * root and receive everyone else's broadcasts; the network's multicast
 * drops, duplicates and reorders packets, and its reliable, in-order RC
 * channels carry ACKs, NAKs, retransmissions and, with co-roots
 * (ibmc_mcast_coroot.h), the relays to co-roots and their aggregated ACKs.
 * An adversary also injects packets from the wrong member, from another
 * job, from an earlier epoch of the group and truncated ones, and, with
 * co-roots, relays from members the plan does not let pass them on (all
 * refused).  Members enter each broadcast after a random delay (skew), as
 * processes do.  Time is the step count, one microsecond a step.
 *
 * With boards, ACKs travel as the netmod's RDMA writes do
 * (ibmc_mcast_board.h): in order on their RC channel, but landing in the
 * owner's board word for the writer, which the owner reads only on its own
 * turns, so unread ACKs are overwritten.  The adversary then also writes
 * words of an earlier epoch, as a member of an earlier channel on the same
 * board would; the owner asks that member again.
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
#include "ibmc_mcast_engine.h"
#include "ibmc_mcast_arrive.h"
#include "tap.h"
#include "rng.h"

#define P 24                    /* payload bytes per fragment */
#define PKT_MAX (sizeof(ibmc_mcast_hdr_t) + P)
#define MAXN 12
#define WINDOW_MAX 64

static const uint64_t job_key = 0xfeedfacecafebeefULL;
static const uint32_t epoch = 2;

typedef struct {
    int members;
    uint32_t window;
    uint32_t ack_every;
    int messages;
    uint64_t max_len;           /* message lengths are 0 .. max_len */
    double drop, dup, reorder, forge;
    int max_skew;               /* steps a member may wait before a broadcast */
    int subgroup;               /* co-roots' subgroup size; 0: none */
    int nak_idle;               /* a member's own steps without progress before it
                                 * asks for everything it lacks; 0: 40 */
    int boards;                 /* ACKs by RDMA write into boards */
    int relay_on_loss;          /* co-roots NAK their parent instead of getting relays */
    uint32_t clock_every;       /* idle turns between clock reads; 0: every turn */
    int inflight;               /* 0: each member runs start, test and finish itself;
                                 * N: it posts up to N broadcasts ahead
                                 * (ibmc_mcast_op_post, MPI_Ibcast) and the channel's
                                 * progress turn runs them */
    int barrier_fanout;         /* 0: none; F: of every three messages one is a
                                 * barrier (ibmc_mcast_arrive, then rank 0's one-byte
                                 * release) and one a small allreduce
                                 * (ibmc_mcast_reduce, then rank 0's broadcast of the
                                 * sum), with F children a parent */
    int in_place;               /* with inflight: a posted broadcast may be received in
                                 * place (place_arm): a second receive queue per member,
                                 * one receive per fragment, each writing its payload
                                 * at its fragment's place in order of arrival, as a
                                 * device consumes receive work requests */
} config_t;

/* One packet in flight: multicast, an RC message, or an ACK board write. */
enum { MSG_MCAST, MSG_RC, MSG_WRITE };
typedef struct {
    int kind;
    int src, dst;
    int forged;                 /* the adversary's */
    ibmc_mcast_rc_t h;          /* MSG_RC */
    uint64_t word;              /* MSG_WRITE */
    int which;                  /* MSG_WRITE: IBMC_MCAST_BOARD_*, or -1: len bytes of
                                 * pkt at byte offset `offset` (write_data) */
    size_t offset;
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

struct sim;

typedef struct {
    struct sim *s;
    int who;
    ibmc_mcast_engine_t eng;
    ibmc_mcast_stats_t stats;
    ibmc_mcast_chan_t ch;
    uint64_t board_words[IBMC_MCAST_BOARD_WORDS(MAXN)];
    int room;                   /* multicast sends it may post this turn */
    int k;                      /* the broadcast it is in or enters next */
    int in_bcast;
    int arriving;               /* in a barrier's arrival step */
    int delay;
    unsigned char *buf;
    /* posted broadcasts (config inflight): one op and buffer per message;
     * k is the next to post, checked the next whose completion is checked */
    ibmc_mcast_op_t *ops;
    unsigned char **bufs;
    int checked, readied;       /* ... and the next to say ready: each waits a while,
                                 * as a node leader waits for its root's data */
    uint64_t frags_expected;
    uint64_t forged_by_reason[IBMC_MCAST_RX_NVERDICTS];
    /* the in-place receive queue (config in_place) */
    int armed;
    unsigned char *place_buf;
    uint64_t place_len;
    uint32_t place_n, place_used;
    uint64_t arms, disarms;
} member_t;

typedef struct sim {
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
    int *entered;               /* by message: members that entered it (barriers and
                                 * allreduces; -1: a broadcast) */
    int *reduce;                /* by message: an allreduce */
    uint64_t barriers_left;     /* member-barriers completed */
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

/* ---- the engine's operations on the fake network ---- */

/* The root multicasts one packet: every other member gets 0, 1 or 2 copies. */
static int op_post(void *io, ibmc_mcast_chan_t * c, const void *pkt, size_t len)
{
    member_t *me = io;
    sim_t *s = me->s;
    int root = me->who;
    me->room--;
    if ((uint32_t) ibmc_mcast_seq_diff(c->tx.next, c->tx.min_acked) > s->c->window)
        s->overrun = 1;
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
    return 0;
}

/* the fake network sends each packet as it is posted */
static int op_flush(void *io, ibmc_mcast_chan_t * c)
{
    (void) io;
    (void) c;
    return 0;
}

static int op_post_room(void *io, ibmc_mcast_chan_t * c)
{
    (void) c;
    return ((member_t *) io)->room;
}

static ibmc_mcast_plan_t plan_of(const sim_t * s, int root)
{
    return ibmc_mcast_plan(s->c->members, s->c->subgroup ? s->c->subgroup : s->c->members, root);
}

static int op_send_rc(void *io, ibmc_mcast_chan_t * c, int to, const ibmc_mcast_rc_t * h,
                      const void *pkt, size_t len, uint16_t pkt_flags)
{
    member_t *me = io;
    sim_t *s = me->s;
    (void) c;
    msg_t m = {.kind = MSG_RC,.src = me->who,.dst = to,.h = *h,.len = len };
    if (len)
        memcpy(m.pkt, pkt, len);
    if (pkt_flags)
        ((ibmc_mcast_hdr_t *) m.pkt)->flags |= pkt_flags;
    push(&s->rc[me->who][to], &m);
    s->naks += h->kind == IBMC_MCAST_RC_NAK;
    s->acks += h->kind == IBMC_MCAST_RC_ACK;
    if (h->kind == IBMC_MCAST_RC_RELAY) {
        s->relays++;
        /* the adversary: the same copy from a member that may not pass it on */
        ibmc_mcast_plan_t p = plan_of(s, h->root);
        int x = (int) rng_below(&s->rng, s->c->members);
        if (chance(s, s->c->forge) && x != to && !ibmc_mcast_plan_may_send(&p, x, to)) {
            m.src = x;
            m.forged = 1;
            push(&s->rc[x][to], &m);
            s->forged_relays++;
        }
    }
    return 0;
}

static int op_write_board(void *io, ibmc_mcast_chan_t * c, int to, int which, uint64_t word,
                          int *written)
{
    member_t *me = io;
    sim_t *s = me->s;
    (void) c;
    /* an arrival count cannot always go as a write (a busy send queue):
     * then it rides an RC message, maybe after its data was written */
    if (which == IBMC_MCAST_BOARD_ARRIVALS && chance(s, 0.1)) {
        *written = 0;
        return 0;
    }
    msg_t m = {.kind = MSG_WRITE,.src = me->who,.dst = to,.word = word,.which = which };
    push(&s->rc[me->who][to], &m);
    s->acks++;
    *written = 1;
    return 0;
}

static int op_write_data(void *io, ibmc_mcast_chan_t * c, int to, size_t offset,
                         const void *data, size_t len, int *written)
{
    member_t *me = io;
    sim_t *s = me->s;
    (void) c;
    msg_t m = {.kind = MSG_WRITE,.src = me->who,.dst = to,.which = -1,.offset = offset,.len = len };
    *written = len <= sizeof(m.pkt) && !chance(s, 0.1);
    if (!*written)
        return 0;
    memcpy(m.pkt, data, len);
    push(&s->rc[me->who][to], &m);
    return 0;
}

static double op_now(void *io)
{
    return (double) ((member_t *) io)->s->steps * 1e-6;
}

/* members take turns: waiting and polling happen between them */
static int op_wait(void *io)
{
    (void) io;
    return 0;
}

static void *op_zalloc(void *io, size_t bytes)
{
    (void) io;
    return calloc(1, bytes);
}

static void op_free(void *io, void *p)
{
    (void) io;
    free(p);
}

/* The root's question to the group travels like its data: lost,
 * duplicated or forged alike. */
static int op_post_ctl(void *io, ibmc_mcast_chan_t * c, const void *pkt, size_t len, int *sent)
{
    *sent = ((member_t *) io)->room > 0;
    return *sent ? op_post(io, c, pkt, len) : 0;
}

static int op_place_arm(void *io, ibmc_mcast_chan_t * c, void *place, void *buf, uint64_t len,
                        uint32_t nfrags, int *armed)
{
    member_t *me = io;
    (void) c;
    *armed = 0;
    if (place != me || me->armed)
        return -1;
    me->armed = *armed = 1;
    me->place_buf = buf;
    me->place_len = len;
    me->place_n = nfrags;
    me->place_used = 0;
    me->arms++;
    return 0;
}

/* Every receive of the queue completes as its packet comes (place_in), so
 * taking the rest back only ends the queue. */
static int op_place_disarm(void *io, ibmc_mcast_chan_t * c, void *place)
{
    member_t *me = io;
    (void) c;
    if (place != me || !me->armed)
        return -1;
    me->disarms++;
    me->armed = 0;
    return 0;
}

static const ibmc_mcast_ops_t ops = {
    .post = op_post,.flush = op_flush,.post_ctl = op_post_ctl,.post_room = op_post_room,
    .send_rc = op_send_rc,
    .write_board = op_write_board,.write_data = op_write_data,.now = op_now,.wait = op_wait,.poll = op_wait,.zalloc = op_zalloc,
    .free = op_free,.place_arm = op_place_arm,.place_disarm = op_place_disarm
};

/* A multicast packet reaches an armed member's in-place queue beside its
 * main one: the queue's next receive takes it, whatever it is, its header
 * to scratch and its payload over that receive's fragment place (the rest
 * of a longer one, which a device would scatter to an overflow buffer, is
 * not written).  A packet that is not that fragment ends the in-place
 * receive (the engine disarms); its twin on the main queue is judged. */
static int place_in(member_t * me, const msg_t * q)
{
    if (!me->armed || me->place_used == me->place_n)
        return 0;
    uint32_t j = me->place_used++;
    unsigned char scratch[sizeof(ibmc_mcast_hdr_t)];
    memset(scratch, 0, sizeof(scratch));
    memcpy(scratch, q->pkt, q->len < sizeof(scratch) ? q->len : sizeof(scratch));
    size_t plen = q->len > sizeof(scratch) ? q->len - sizeof(scratch) : 0;
    uint64_t off = (uint64_t) j * P;
    uint64_t room = me->place_len - off < P ? me->place_len - off : P;
    unsigned char overflow[P], whole[P];
    const unsigned char *payload = me->place_buf + off;
    if (plen > P)
        plen = P;       /* the device would fail the receive: no longer packet goes out */
    memcpy(me->place_buf + off, q->pkt + sizeof(scratch), plen < room ? plen : room);
    if (plen > room) {
        /* the last receive's tail goes to an overflow; the I/O side hands
         * the engine the packet's payload whole */
        memcpy(overflow, q->pkt + sizeof(scratch) + room, plen - room);
        memcpy(whole, me->place_buf + off, room);
        memcpy(whole + room, overflow, plen - room);
        payload = whole;
    }
    int placed = 0;
    return ibmc_mcast_placed_in(&me->ch, j, scratch, payload, plen, q->src, &placed);
}

/* ---- the network delivers ---- */

static uint64_t verdicts(const member_t * me)
{
    uint64_t n = 0;
    for (int v = 0; v < IBMC_MCAST_RX_NVERDICTS; v++)
        n += me->ch.rx.count[v];
    return n;
}

/* A multicast packet or an RC message reaches its member's engine; what
 * the engine made of a forged one is read off its counters. */
static void deliver(sim_t * s, const msg_t * q)
{
    member_t *me = &s->m[q->dst];
    uint64_t before[IBMC_MCAST_RX_NVERDICTS], dropped = me->stats.dropped, seen = verdicts(me);
    memcpy(before, me->ch.rx.count, sizeof(before));
    int err;
    if (q->kind == MSG_MCAST && me->armed && chance(s, 0.5)) {
        /* the main queue's twin polled first (the I/O side polls both) */
        err = ibmc_mcast_mcast_in(&me->ch, q->pkt, q->len, q->src);
        if (!err)
            err = place_in(me, q);
    } else if (q->kind == MSG_MCAST) {
        err = place_in(me, q);
        if (!err)
            err = ibmc_mcast_mcast_in(&me->ch, q->pkt, q->len, q->src);
    } else {
        err = ibmc_mcast_rc_in(&me->ch, q->src, &q->h, q->pkt, q->len);
    }
    if (err)
        snprintf(s->why, sizeof(s->why), "member %d: the engine returned %d", q->dst, err);
    if (q->kind == MSG_RC && (q->h.kind == IBMC_MCAST_RC_DATA || q->h.kind == IBMC_MCAST_RC_RELAY)
        && verdicts(me) == seen && me->stats.dropped > dropped)
        s->bad_relay++;         /* refused by the plan before the receive window */
    if (q->forged)
        for (int v = 0; v < IBMC_MCAST_RX_NVERDICTS; v++)
            if (me->ch.rx.count[v] != before[v]) {
                me->forged_by_reason[v]++;
                if (v == IBMC_MCAST_RX_DELIVERED)
                    s->forged_delivered++;
            }
}

static void serve_rc(sim_t * s, const msg_t * q)
{
    member_t *me = &s->m[q->dst];
    if (q->kind != MSG_WRITE) {
        deliver(s, q);
        return;
    }
    if (q->which < 0) {
        memcpy((unsigned char *) me->board_words + q->offset, q->pkt, q->len);
        return;
    }
    if (q->which == IBMC_MCAST_BOARD_ARRIVALS) {
        me->board_words[s->c->members + q->src] = q->word;
        return;
    }
    uint64_t *w = &me->board_words[q->src];
    s->acks_coalesced += *w != me->ch.board_seen[q->src];
    *w = q->word;
    /* the adversary: a member of an earlier channel writes late */
    if (chance(s, s->c->forge)) {
        int x = (int) rng_below(&s->rng, s->c->members);
        me->board_words[x] = ibmc_mcast_board_word(epoch - 1, (uint32_t) rng_next(&s->rng));
        s->late_writes++;
    }
}

/* ---- the members ---- */

/* Message k's bytes at member me: ready to send at the root, or marked
 * fresh at a receiver, whose fragments it expects; 0 for an empty one. */
static uint64_t prepare(sim_t * s, member_t * me, int k, unsigned char *buf)
{
    uint64_t len = s->len[k];
    if (len == 0)
        return 0;
    if (s->root[k] == me->who) {
        for (uint64_t i = 0; i < len; i++)
            buf[i] = byte_of(k, i);
    } else {
        memset(buf, 0xee, s->c->max_len);
        me->frags_expected += ibmc_mcast_nfrags(len, P);
    }
    return len;
}

/* Member who's contribution to allreduce k, word i, and the sum of all. */
static uint32_t part_of(int k, int who, size_t i)
{
    return (uint32_t) k * 1000003u + (uint32_t) who * 7919u + (uint32_t) i * 31u + 1;
}

static void combine_sum(void *ctx, const void *in, void *inout, size_t len)
{
    (void) ctx;
    for (size_t i = 0; i < len / 4; i++) {
        uint32_t a, b;
        memcpy(&a, (const unsigned char *) in + 4 * i, 4);
        memcpy(&b, (unsigned char *) inout + 4 * i, 4);
        b += a;
        memcpy((unsigned char *) inout + 4 * i, &b, 4);
    }
}

static void check_bytes(sim_t * s, int who, int k, const unsigned char *buf)
{
    if (s->reduce && s->reduce[k]) {
        /* every member, rank 0 included, holds the sum of everyone's */
        for (size_t i = 0; i < s->len[k] / 4; i++) {
            uint32_t want = 0, got;
            for (int m = 0; m < s->c->members; m++)
                want += part_of(k, m, i);
            memcpy(&got, buf + 4 * i, 4);
            if (got != want) {
                snprintf(s->why, sizeof(s->why), "member %d, allreduce %d: word %zu is %u, not "
                         "%u", who, k, i, got, want);
                return;
            }
        }
        return;
    }
    if (s->root[k] == who)
        return;
    for (uint64_t i = 0; i < s->len[k]; i++)
        if (buf[i] != byte_of(k, i)) {
            snprintf(s->why, sizeof(s->why), "member %d, message %d: byte %llu is %u, not %u",
                     who, k, (unsigned long long) i, buf[i], byte_of(k, i));
            return;
        }
}

/* A member that posts its broadcasts (config inflight): it posts the next
 * one when fewer than inflight are outstanding and its skew has passed,
 * and checks those the channel's progress turn has completed, in order. */
static void posted_step(sim_t * s, int who)
{
    member_t *me = &s->m[who];
    const config_t *c = s->c;
    int release, err;
    me->room = 1 + (int) rng_below(&s->rng, 3);
    if ((err = ibmc_mcast_chan_progress(&me->ch, &release)))
        snprintf(s->why, sizeof(s->why), "member %d: progress returned %d", who, err);
    while (me->checked < me->readied && (s->len[me->checked] == 0 ||
                                         ibmc_mcast_op_done(&me->ops[me->checked]))) {
        int k = me->checked++;
        if (me->ops[k].mismatch)
            snprintf(s->why, sizeof(s->why), "member %d: message %d mismatched", who, k);
        check_bytes(s, who, k, me->bufs[k]);
    }
    if (me->readied < me->k && chance(s, 0.5)) {
        ibmc_mcast_op_ready(&me->ops[me->readied++]);
        if ((err = ibmc_mcast_chan_progress(&me->ch, &release)))
            snprintf(s->why, sizeof(s->why), "member %d: progress returned %d", who, err);
    }
    me->in_bcast = me->checked < me->k;
    if (me->k >= c->messages || me->k - me->checked >= c->inflight)
        return;
    if (me->delay > 0) {
        me->delay--;
        return;
    }
    int k = me->k++;
    me->bufs[k] = malloc(c->max_len + 1);
    uint64_t len = prepare(s, me, k, me->bufs[k]);
    /* MPI_Bcast of no data touches no stream */
    if (len) {
        ibmc_mcast_op_post(&me->ch, &me->ops[k], me->bufs[k], len, s->root[k], 0);
        if (c->in_place)
            me->ops[k].place = me;
    } else
        me->ops[k].ready = 1;
    me->in_bcast = 1;
    me->delay = (int) rng_below(&s->rng, c->max_skew + 1);
}

/* One member's turn: its board, entering a broadcast, sending or waiting
 * in it, leaving it. */
static void member_step(sim_t * s, int who)
{
    member_t *me = &s->m[who];
    const config_t *c = s->c;
    int release, err;
    if (c->inflight) {
        posted_step(s, who);
        return;
    }
    if ((err = ibmc_mcast_chan_progress(&me->ch, &release)))
        snprintf(s->why, sizeof(s->why), "member %d: progress returned %d", who, err);
    if (!me->in_bcast && me->k < c->messages) {
        if (me->delay > 0) {
            me->delay--;
            return;
        }
        int k = me->k;
        uint64_t len = prepare(s, me, k, me->buf);
        if (s->entered && s->entered[k] >= 0) {
            /* a barrier: arrive, then take rank 0's release */
            s->entered[k]++;
            me->in_bcast = 1;
            me->arriving = 1;
            if (s->reduce[k]) {
                for (size_t i = 0; i < s->len[k] / 4; i++) {
                    uint32_t v = part_of(k, who, i);
                    memcpy(me->buf + 4 * i, &v, 4);
                }
                ibmc_mcast_reduce_start(&me->ch, c->barrier_fanout, me->buf, s->len[k],
                                        combine_sum, NULL);
            } else {
                ibmc_mcast_arrive_start(&me->ch, c->barrier_fanout);
            }
        } else if (len == 0) {
            /* MPI_Bcast of no data touches no stream */
            me->k++;
            me->delay = (int) rng_below(&s->rng, c->max_skew + 1);
            return;
        }
        if (!me->arriving) {
            me->in_bcast = 1;
            if ((err = ibmc_mcast_bcast_start(&me->ch, me->buf, len, s->root[k])))
                snprintf(s->why, sizeof(s->why), "member %d: start of message %d returned %d",
                         who, k, err);
            if (me->ch.mismatch)
                snprintf(s->why, sizeof(s->why), "member %d: message %d mismatched", who, k);
        }
    }
    if (!me->in_bcast)
        return;
    int k = me->k, done;
    if (me->arriving) {
        if ((err = ibmc_mcast_arrive_test(&me->ch, &done)))
            snprintf(s->why, sizeof(s->why), "member %d: arrival returned %d", who, err);
        if (!done)
            return;
        if (who == 0 && s->entered[k] != c->members)
            snprintf(s->why, sizeof(s->why), "barrier %d: rank 0 heard all arrive when %d of %d "
                     "had entered", k, s->entered[k], c->members);
        me->arriving = 0;
        if ((err = ibmc_mcast_bcast_start(&me->ch, me->buf, s->len[k], 0)))
            snprintf(s->why, sizeof(s->why), "member %d: release of barrier %d returned %d",
                     who, k, err);
    }
    me->room = 1 + (int) rng_below(&s->rng, 3);
    if ((err = ibmc_mcast_bcast_test(&me->ch, &done)))
        snprintf(s->why, sizeof(s->why), "member %d: test returned %d", who, err);
    if (!done)
        return;
    if ((err = ibmc_mcast_bcast_finish(&me->ch)) || me->ch.mismatch)
        snprintf(s->why, sizeof(s->why), "member %d: finish of message %d: %d", who, k, err);
    check_bytes(s, who, k, me->buf);
    if (s->entered && s->entered[k] >= 0) {
        if (s->entered[k] != c->members)
            snprintf(s->why, sizeof(s->why), "member %d left barrier %d when %d of %d had "
                     "entered", who, k, s->entered[k], c->members);
        s->barriers_left++;
    }
    me->in_bcast = 0;
    me->k++;
    me->delay = (int) rng_below(&s->rng, c->max_skew + 1);
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
    if (c->barrier_fanout) {
        /* of every three messages one a barrier (its release one byte from
         * rank 0) and one an allreduce of 4 to 24 bytes (its result's
         * broadcast from rank 0) */
        s.entered = calloc(c->messages, sizeof(*s.entered));
        s.reduce = calloc(c->messages, sizeof(*s.reduce));
        for (int k = 0; k < c->messages; k++) {
            s.entered[k] = k % 3 ? 0 : -1;
            s.reduce[k] = k % 3 == 2;
            if (k % 3) {
                s.len[k] = k % 3 == 1 ? 1 : 4 * (uint64_t) (1 + k % 6);
                s.root[k] = 0;
            }
        }
    }
    /* the NAK timeout: nak_idle of a member's own turns, which come about
     * once every 10/3 x members steps; it may grow eightfold */
    int idle = c->nak_idle ? c->nak_idle : 40;
    uint32_t nak_us = (uint32_t) (idle * 10 * c->members / 3);
    ibmc_mcast_params_t params = {.window = c->window,.ack_every = c->ack_every,
        .subgroup = c->subgroup ? c->subgroup : c->members,
        .nak_timeout_us = nak_us,.nak_max_us = 8 * nak_us,.rdma_acks = c->boards,
        .relay_on_loss = c->relay_on_loss,.clock_every = c->clock_every
    };
    for (int i = 0; i < c->members; i++) {
        member_t *me = &s.m[i];
        me->s = &s;
        me->who = i;
        me->buf = calloc(c->max_len + 1, 1);
        me->ops = calloc(c->messages, sizeof(*me->ops));
        me->bufs = calloc(c->messages, sizeof(*me->bufs));
        ibmc_mcast_engine_init(&me->eng, &ops, me, &params, &me->stats, NULL);
        if (ibmc_mcast_chan_init(&me->ch, &me->eng, c->members, i, 4, P)) {
            snprintf(why, why_len, "out of memory");
            return 0;
        }
        ibmc_mcast_chan_open(&me->ch, job_key, epoch, c->boards ? me->board_words : NULL);
        ibmc_mcast_chan_set_ready(&me->ch);
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
                     (unsigned long long) (me->k < c->messages ? s.len[me->k] : 0), me->ch.rx.next,
                     me->ch.rx.posted, me->ch.rx.got, me->ch.rx.nfrags, me->ch.rx.released,
                     me->ch.rx.acked, me->ch.tx.next, me->ch.tx.min_acked, me->ch.tx.sent,
                     me->ch.tx.nfrags);
            for (int m = 0; m < c->members; m++)
                tap_diag("      from %d: acked %u, board word %llx (read %llx), last ACK sent "
                         "here %u, as leaf %u, aggregate sent %u owed %d",
                         m, me->ch.acked[m], (unsigned long long) me->board_words[m],
                         (unsigned long long) me->ch.board_seen[m], s.m[m].ch.said[i],
                         me->ch.leaf_acked ? me->ch.leaf_acked[m] : 0,
                         me->ch.agg_sent ? me->ch.agg_sent[m] : 0, me->ch.owed ? me->ch.owed[m] : 0);
        }
    CHECK(!s.overrun, "a root had more than a window outstanding");
    CHECK(!s.forged_delivered, "%d forged packets delivered", s.forged_delivered);
    /* forged copies still in flight when the stream finished: deliver them
     * too, so that each is seen refused */
    for (int more = 1; more;) {
        more = 0;
        for (int a = 0; a < c->members; a++)
            for (int b = 0; b < c->members; b++)
                while (s.rc[a][b].n) {
                    msg_t q = take(&s.rc[a][b], 0);
                    more = 1;
                    if (q.kind == MSG_RC && (q.h.kind == IBMC_MCAST_RC_DATA ||
                                             q.h.kind == IBMC_MCAST_RC_RELAY))
                        deliver(&s, &q);
                }
    }
    CHECK(s.bad_relay == s.forged_relays, "%d RC copies refused, %d forged", s.bad_relay,
          s.forged_relays);
    CHECK(!c->forge || !c->subgroup || c->subgroup >= c->members || c->relay_on_loss ||
          s.forged_relays > 0, "the adversary forged no relay");
    CHECK((c->subgroup && c->subgroup < c->members && !c->relay_on_loss) == (s.relays > 0),
          "%llu relays to co-roots with subgroups of %d%s", (unsigned long long) s.relays,
          c->subgroup, c->relay_on_loss ? ", relaying only losses" : "");
    uint64_t forged = 0, retransmits = 0, in_place = 0, arms = 0;
    for (int i = 0; i < c->members; i++) {
        member_t *me = &s.m[i];
        const uint64_t *n = me->ch.rx.count, *f = me->forged_by_reason;
        CHECK(me->ch.rx.frags_delivered == me->frags_expected, "member %d delivered %llu fragments, not %llu",
              i, (unsigned long long) me->ch.rx.frags_delivered, (unsigned long long) me->frags_expected);
        CHECK(n[IBMC_MCAST_RX_OUT_OF_WINDOW] == f[IBMC_MCAST_RX_OUT_OF_WINDOW],
              "member %d: a correct packet beyond its window", i);
        CHECK(n[IBMC_MCAST_RX_MISMATCH] == 0, "member %d: length mismatch", i);
        CHECK(n[IBMC_MCAST_RX_FOREIGN] == f[IBMC_MCAST_RX_FOREIGN] &&
              n[IBMC_MCAST_RX_STALE_EPOCH] == f[IBMC_MCAST_RX_STALE_EPOCH] &&
              n[IBMC_MCAST_RX_MALFORMED] == f[IBMC_MCAST_RX_MALFORMED],
              "member %d: foreign/stale/malformed counts differ from what was injected", i);
        CHECK(me->ch.relay.bogus_acks == 0, "member %d: %llu bogus ACKs as co-root", i,
              (unsigned long long) me->ch.relay.bogus_acks);
        CHECK(me->ch.tx.bogus_acks == 0 && me->ch.tx.bogus_naks == 0,
              "member %d as root: %llu bogus ACKs, %llu bogus NAKs", i,
              (unsigned long long) me->ch.tx.bogus_acks, (unsigned long long) me->ch.tx.bogus_naks);
        /* the copies pvar is what the parts copied: one per fragment into
         * the posted buffer, one more per fragment that waited in a slot,
         * one per fragment into a root's ring or a co-root's relay ring */
        CHECK(me->stats.copies == me->ch.rx.copies + me->ch.tx.packets + me->ch.relay.kept,
              "member %d: %llu copies counted, the window, ring and relay ring made %llu", i,
              (unsigned long long) me->stats.copies, (unsigned long long) (me->ch.rx.copies +
                                                                          me->ch.tx.packets +
                                                                          me->ch.relay.kept));
        CHECK(c->forge || me->ch.rx.copies + me->ch.rx.in_place ==
              me->ch.rx.frags_delivered + n[IBMC_MCAST_RX_HELD],
              "member %d: %llu copies by the window and %llu in place for %llu fragments "
              "delivered, %llu held", i, (unsigned long long) me->ch.rx.copies,
              (unsigned long long) me->ch.rx.in_place,
              (unsigned long long) me->ch.rx.frags_delivered,
              (unsigned long long) n[IBMC_MCAST_RX_HELD]);
        CHECK(me->stats.in_place == me->ch.rx.in_place && (c->in_place || !me->ch.rx.in_place),
              "member %d: %llu fragments in place (%llu counted)%s", i,
              (unsigned long long) me->ch.rx.in_place, (unsigned long long) me->stats.in_place,
              c->in_place ? "" : " without an in-place queue");
        CHECK(!me->armed, "member %d: still armed at the end", i);
        CHECK(c->drop > 0 || c->dup > 0 || c->forge > 0 ||
              n[IBMC_MCAST_RX_SHADOWED] == me->ch.rx.in_place,
              "member %d: %llu main-queue twins judged shadowed for %llu fragments in place "
              "on a perfect network", i, (unsigned long long) n[IBMC_MCAST_RX_SHADOWED],
              (unsigned long long) me->ch.rx.in_place);
        in_place += me->ch.rx.in_place;
        arms += me->arms;
        for (int v = 0; v < IBMC_MCAST_RX_NVERDICTS; v++)
            forged += f[v];
        retransmits += me->ch.tx.retransmits + me->ch.relay.served;
    }
    CHECK(c->forge == 0 || forged > 0, "the adversary injected nothing");
    CHECK(!c->in_place || (arms > 0 && in_place > 0), "in place: %llu arms, %llu fragments",
          (unsigned long long) arms, (unsigned long long) in_place);
    uint64_t foreign = 0;
    for (int i = 0; i < c->members; i++)
        foreign += s.m[i].ch.board.foreign;
    CHECK(!c->boards || !c->forge || (s.late_writes > 0 && foreign > 0),
          "%llu late board writes, %llu read as foreign", (unsigned long long) s.late_writes,
          (unsigned long long) foreign);
    CHECK(!c->boards || c->members < 4 || s.acks_coalesced > 0,
          "no board ACK was ever overwritten before it was read");
    if (c->barrier_fanout) {
        uint64_t sent = 0, written = 0, read = 0, want = 0;
        for (int i = 0; i < c->members; i++) {
            sent += s.m[i].stats.arrivals_sent;
            written += s.m[i].stats.arrivals_written;
            read += s.m[i].stats.arrivals_read;
        }
        for (int k = 0; k < c->messages; k++)
            want += s.entered[k] >= 0;
        CHECK(s.barriers_left == want * c->members, "%llu member-barriers left, not %llu",
              (unsigned long long) s.barriers_left, (unsigned long long) (want * c->members));
        /* every member but rank 0 reports once a barrier, its subtree's */
        CHECK(sent == want * (c->members - 1), "%llu arrivals reported, not %llu",
              (unsigned long long) sent, (unsigned long long) (want * (c->members - 1)));
        CHECK(c->boards ? written < sent && written > sent / 2 && read > 0 && read <= written :
              written == 0 && read == 0,
              "arrivals: %llu reported, %llu written, %llu read off boards",
              (unsigned long long) sent, (unsigned long long) written, (unsigned long long) read);
    }
    CHECK(c->drop == 0 || retransmits > 0, "losses but no retransmission");
    CHECK(c->drop > 0 || c->reorder > 0 || c->forge > 0 || retransmits == 0,
          "%llu retransmissions on a perfect network", (unsigned long long) retransmits);
    /* co-roots served from their own copies: losses at co-roots happened
     * and were answered without a relay */
    uint64_t served = 0, dups = 0, asks = 0, asked_naks = 0;
    for (int i = 0; i < c->members; i++) {
        served += s.m[i].ch.relay.served;
        dups += s.m[i].ch.rx.count[IBMC_MCAST_RX_DUPLICATE];
        asks += s.m[i].stats.asks_multicast;
        asked_naks += s.m[i].stats.naks_asked;
    }

    CHECK(!c->relay_on_loss || c->drop == 0 || served > 0,
          "relaying only losses, with %.0f%% loss, no co-root answered a NAK", 100 * c->drop);
    CHECK(c->drop > 0 || c->dup > 0 || c->reorder > 0 || c->forge > 0 ||
          (c->subgroup && c->subgroup < c->members && !c->relay_on_loss) || dups == 0,
          "%llu duplicates on a perfect network", (unsigned long long) dups);
    if (ok && c->in_place)
        tap_diag("  seed %llu: %llu broadcasts received in place, %llu fragments in place",
                 (unsigned long long) seed, (unsigned long long) arms,
                 (unsigned long long) in_place);
    if (ok)
        tap_diag("  seed %llu: %d messages, %llu steps, %llu drops, %llu NAKs, %llu retransmitted, "
                 "%llu ACKs, %llu relayed, %llu forged dropped, %llu questions to the group, "
                 "%llu NAKs asked", (unsigned long long) seed,
                 c->messages, (unsigned long long) s.steps, (unsigned long long) s.drops,
                 (unsigned long long) s.naks, (unsigned long long) retransmits,
                 (unsigned long long) s.acks, (unsigned long long) s.relays,
                 (unsigned long long) forged, (unsigned long long) asks,
                 (unsigned long long) asked_naks);
#undef CHECK
    for (int i = 0; i < c->members; i++) {
        ibmc_mcast_chan_free(&s.m[i].ch);
        free(s.m[i].buf);
        for (int k = 0; k < c->messages; k++)
            free(s.m[i].bufs[k]);
        free(s.m[i].bufs);
        free(s.m[i].ops);
        for (int j = 0; j < c->members; j++)
            free(s.rc[i][j].v);
    }
    free(s.mcast.v);
    free(s.len);
    free(s.root);
    free(s.entered);
    free(s.reduce);
    return ok;
}

int main(void)
{
    static const struct {
        const char *name;
        config_t c;
    } cases[] = {
        {"2 members, perfect network", {2, 4, 2, 200, 10 * P, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0}},
        {"5 members, 10% loss, 5% duplicates, reordering",
         {5, 16, 4, 200, 40 * P, 0.10, 0.05, 0.5, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0}},
        {"8 members, 30% loss, 10% duplicates, full reordering, forged packets",
         {8, 8, 8, 150, 24 * P, 0.30, 0.10, 1.0, 0.05, 10, 0, 0, 0, 0, 0, 0, 0, 0}},
        {"3 members, 1% loss, ACKs only when asked", {3, 64, 0, 200, 200 * P, 0.01, 0, 0.05, 0, 50, 0, 0, 0, 0, 0, 0, 0, 0}},
        {"9 members, window of 2, every-member ACKs, loss and forgery",
         {9, 2, 1, 100, 6 * P, 0.05, 0.05, 0.3, 0.02, 5, 0, 0, 0, 0, 0, 0, 0, 0}},
        {"8 members, co-roots every 2, perfect network: nothing sent again",
         {8, 16, 4, 200, 40 * P, 0, 0, 0, 0, 20, 2, 2000, 0, 0, 0, 0, 0, 0}},
        {"8 members, co-roots every 2, 10% loss, duplicates, reordering",
         {8, 16, 4, 200, 40 * P, 0.10, 0.05, 0.5, 0, 20, 2, 0, 0, 0, 0, 0, 0, 0}},
        {"9 members, co-roots every 3, 30% loss, forged packets",
         {9, 8, 8, 150, 24 * P, 0.30, 0.10, 1.0, 0.05, 10, 3, 0, 0, 0, 0, 0, 0, 0}},
        {"7 members, every member a co-root, ACKs only when asked",
         {7, 32, 0, 150, 100 * P, 0.05, 0.02, 0.2, 0, 30, 1, 0, 0, 0, 0, 0, 0, 0}},
        {"9 members, co-roots every 4, window of 2, every-member ACKs",
         {9, 2, 1, 100, 6 * P, 0.05, 0.05, 0.3, 0.02, 5, 4, 0, 0, 0, 0, 0, 0, 0}},
        {"8 members, ACK boards, perfect network: nothing sent again",
         {8, 16, 4, 200, 40 * P, 0, 0, 0, 0, 20, 0, 2000, 1, 0, 0, 0, 0, 0}},
        {"8 members, ACK boards, 30% loss, late writes of an earlier channel",
         {8, 8, 8, 150, 24 * P, 0.30, 0.10, 1.0, 0.05, 10, 0, 0, 1, 0, 0, 0, 0, 0}},
        {"9 members, ACK boards, co-roots every 3, window of 2, every-member ACKs, late writes",
         {9, 2, 1, 100, 6 * P, 0.05, 0.05, 0.3, 0.02, 5, 3, 0, 1, 0, 0, 0, 0, 0}},
        {"7 members, ACK boards, every member a co-root, ACKs only when asked",
         {7, 32, 0, 150, 100 * P, 0.05, 0.02, 0.2, 0, 30, 1, 0, 1, 0, 0, 0, 0, 0}},
        {"12 members, ACK boards, co-roots every 2: a relay and ACK tree 3 deep, 10% loss",
         {12, 16, 4, 120, 40 * P, 0.10, 0.05, 0.5, 0.02, 20, 2, 0, 1, 0, 0, 0, 0, 0}},
        {"8 members, co-roots every 2 relaying only losses, perfect network: no RC copy, no duplicate",
         {8, 16, 4, 200, 40 * P, 0, 0, 0, 0, 20, 2, 2000, 0, 1, 0, 0, 0, 0}},
        {"12 members, ACK boards, co-roots every 2 relaying only losses, 10% loss, forged packets",
         {12, 16, 4, 120, 40 * P, 0.10, 0.05, 0.5, 0.02, 20, 2, 0, 1, 1, 0, 0, 0, 0}},
        {"9 members, co-roots every 3 relaying only losses, 30% loss, window of 8",
         {9, 8, 8, 150, 24 * P, 0.30, 0.10, 1.0, 0, 10, 3, 0, 0, 1, 0, 0, 0, 0}},
        {"7 members, every member a co-root relaying only losses, ACKs only when asked",
         {7, 32, 0, 150, 100 * P, 0.05, 0.02, 0.2, 0, 30, 1, 0, 1, 1, 0, 0, 0, 0}},
        {"8 members, co-roots every 2, 10% loss, the clock read every 4th idle turn",
         {8, 16, 4, 200, 40 * P, 0.10, 0.05, 0.5, 0, 20, 2, 0, 0, 0, 4, 0, 0, 0}},
        {"8 members, ACK boards, perfect network, the clock read every 8th idle turn: nothing sent again",
         {8, 16, 4, 200, 40 * P, 0, 0, 0, 0, 20, 0, 2000, 1, 0, 8, 0, 0, 0}},
        {"9 members, ACK boards, 30% loss, late writes, the clock read every 8th idle turn",
         {9, 8, 8, 150, 24 * P, 0.30, 0.10, 1.0, 0.05, 10, 0, 0, 1, 0, 8, 0, 0, 0}},
        {"posted broadcasts, 1 at a time, 5 members, perfect network: nothing sent again",
         {5, 16, 4, 200, 40 * P, 0, 0, 0, 0, 20, 0, 2000, 1, 0, 0, 1, 0, 0}},
        {"posted broadcasts, 4 in flight, 8 members, 10% loss, duplicates, reordering",
         {8, 16, 4, 200, 40 * P, 0.10, 0.05, 0.5, 0, 20, 0, 0, 1, 0, 0, 4, 0, 0}},
        {"posted broadcasts, 16 in flight, 8 members, 30% loss, forged packets, window of 8",
         {8, 8, 8, 150, 24 * P, 0.30, 0.10, 1.0, 0.05, 10, 0, 0, 1, 0, 0, 16, 0, 0}},
        {"posted broadcasts, 4 in flight, 12 members, co-roots every 2 relaying only losses, 10% loss",
         {12, 16, 4, 120, 40 * P, 0.10, 0.05, 0.5, 0.02, 20, 2, 0, 1, 1, 0, 4, 0, 0}},
        {"barriers and allreduces, fanout 2 (a tree 3 deep), ACK boards, perfect network: nothing sent again",
         {8, 16, 4, 150, 40 * P, 0, 0, 0, 0, 20, 0, 2000, 1, 0, 0, 0, 2, 0}},
        {"barriers and allreduces, fanout 2, 10 members, ACK boards, 30% loss, reordering, late writes",
         {10, 8, 8, 90, 24 * P, 0.30, 0.10, 1.0, 0.05, 10, 0, 0, 1, 0, 0, 0, 2, 0}},
        {"barriers and allreduces, fanout 3 over RC messages, co-roots every 2, 10% loss",
         {9, 16, 4, 150, 40 * P, 0.10, 0.05, 0.5, 0, 20, 2, 0, 0, 0, 0, 0, 3, 0}},
        {"barriers and allreduces, fanout 16 (one level), 7 members, ACK boards, 5% loss, no skew",
         {7, 16, 4, 150, 40 * P, 0.05, 0.02, 0.2, 0, 0, 0, 0, 1, 0, 0, 0, 16, 0}},
        {"received in place, 1 at a time, 5 members, perfect network: nothing sent again",
         {5, 16, 4, 200, 40 * P, 0, 0, 0, 0, 20, 0, 2000, 1, 0, 0, 1, 0, 1}},
        {"received in place, 4 in flight, 8 members, 10% loss, duplicates, reordering",
         {8, 16, 4, 200, 40 * P, 0.10, 0.05, 0.5, 0, 20, 0, 0, 1, 0, 0, 4, 0, 1}},
        {"received in place, 16 in flight, 8 members, 30% loss, forged packets, window of 8",
         {8, 8, 8, 150, 24 * P, 0.30, 0.10, 1.0, 0.05, 10, 0, 0, 1, 0, 0, 16, 0, 1}},
        {"received in place, 4 in flight, 12 members, co-roots every 2 relaying only losses, 10% loss",
         {12, 16, 4, 120, 40 * P, 0.10, 0.05, 0.5, 0.02, 20, 2, 0, 1, 1, 0, 4, 0, 1}},
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
