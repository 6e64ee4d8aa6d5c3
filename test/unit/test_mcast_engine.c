/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The multicast engine's own decisions, one at a time, with a clock and a
 * network the test moves by hand (test_mcast_sim.c runs it at random):
 *   - a root posts every packet its window allows and flushes once;
 *   - a NAK timeout first polls once more, and no NAK goes when the poll
 *     brings the data;
 *   - a timeout NAK whose data then comes by multicast was premature: the
 *     channel's NAK timeout becomes twice the silence it ended, so the next
 *     broadcast waits longer;
 *   - a retransmission that fills a real gap lets the timeout shrink, below
 *     its configured start, down to two measured round trips;
 *   - a timeout that ran out long before the process looked (it was not
 *     running) sends no NAK and raises the timeout to twice the stall;
 *   - a length mismatch ends the broadcast and is reported;
 *   - the deadline a caller may sleep until is when the timers act;
 *   - a member whose channel has not learned a timeout below its start
 *     from real losses sends no timeout NAK, whether nothing of the
 *     message has come or only its tail is missing (the root may not have
 *     sent); the root's question about its unacknowledged packets tells it
 *     what was sent, and it NAKs at once; only the message's root or
 *     co-root is believed;
 *   - the root asks its group by multicast, losses first, then ACKs, then
 *     each member over RC; members answer as asked, and a question that
 *     fails a check changes nothing;
 *   - a co-root's broadcast completes before it relays the packet that
 *     completed it: the relays go at its next turn, none lost;
 *   - a co-root below another co-root reports its subtree to it, naming the
 *     root, once its leaf and its child co-root have caught up; an ACK that
 *     names a root from a member that is not its child is dropped;
 *   - a late word of an earlier channel on a root's board is asked about at
 *     once, but the question claims only what every member acknowledged:
 *     the root's last packets may still be on their way, and no member
 *     NAKs them;
 *   - with params.clock_every, idle turns read the clock only that often,
 *     and the NAK timer and the root's question still act;
 *   - the channel's state is the engine's: a NEW channel (initialised, or
 *     zeroed) takes nothing; set_probing, set_ready and fail move it as
 *     ibmc_mcast_engine.h says and refuse every other move: a PROBING
 *     channel takes only the probe and its acknowledgements, a failed one
 *     stays failed, a READY or RETIRING one is never failed or set back;
 *     and the accessors the I/O side reads (the probe done, the posted
 *     root, the window, the NAK timeout) say what the channel holds. */

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_mcast_engine.h"
#include "ibmc_mcast_coroot.h"
#include "tap.h"

#define P 16
#define PKT (sizeof(ibmc_mcast_hdr_t) + P)
#define MAXQ 256

typedef struct {
    unsigned char pkt[PKT];
    size_t len;
    ibmc_mcast_rc_t h;
    int to;
} sent_t;

/* The world of one member: what it sent, its clock, what its poll brings. */
typedef struct {
    double t;
    int room;
    sent_t mcast[MAXQ];
    int nmcast, flushes, posts_at_flush;
    sent_t ctl[MAXQ];           /* questions to the group (post_ctl) */
    int nctl, no_ctl;           /* no_ctl: post_ctl cannot send now */
    sent_t rc[MAXQ];
    int nrc;
    ibmc_mcast_chan_t *feed_to; /* poll delivers feed[] to this channel */
    sent_t feed[MAXQ];
    int nfeed, polls;
    int nows;                   /* clock reads */
} world_t;

static int w_post(void *io, ibmc_mcast_chan_t * c, const void *pkt, size_t len)
{
    world_t *w = io;
    (void) c;
    memcpy(w->mcast[w->nmcast].pkt, pkt, len);
    w->mcast[w->nmcast++].len = len;
    w->room--;
    return 0;
}

static int w_flush(void *io, ibmc_mcast_chan_t * c)
{
    world_t *w = io;
    (void) c;
    w->flushes++;
    w->posts_at_flush = w->nmcast;
    return 0;
}

static int w_post_ctl(void *io, ibmc_mcast_chan_t * c, const void *pkt, size_t len, int *sent)
{
    world_t *w = io;
    (void) c;
    *sent = !w->no_ctl;
    if (*sent) {
        memcpy(w->ctl[w->nctl].pkt, pkt, len);
        w->ctl[w->nctl++].len = len;
    }
    return 0;
}

static int w_room(void *io, ibmc_mcast_chan_t * c)
{
    (void) c;
    return ((world_t *) io)->room;
}

static int w_send_rc(void *io, ibmc_mcast_chan_t * c, int to, const ibmc_mcast_rc_t * h,
                     const void *pkt, size_t len, uint16_t pkt_flags)
{
    world_t *w = io;
    (void) c;
    sent_t *s = &w->rc[w->nrc++];
    s->h = *h;
    s->to = to;
    s->len = len;
    if (len)
        memcpy(s->pkt, pkt, len);
    if (pkt_flags)
        ((ibmc_mcast_hdr_t *) s->pkt)->flags |= pkt_flags;
    return 0;
}

static int w_write_board(void *io, ibmc_mcast_chan_t * c, int to, int which, uint64_t word,
                         int *written)
{
    (void) io;
    (void) c;
    (void) to;
    (void) which;
    (void) word;
    *written = 0;
    return 0;
}

static double w_now(void *io)
{
    ((world_t *) io)->nows++;
    return ((world_t *) io)->t;
}

static int w_wait(void *io)
{
    (void) io;
    return 0;
}

static int w_poll(void *io)
{
    world_t *w = io;
    w->polls++;
    for (int i = 0; i < w->nfeed; i++)
        ibmc_mcast_mcast_in(w->feed_to, w->feed[i].pkt, w->feed[i].len, 0);
    w->nfeed = 0;
    return 0;
}

static void *w_zalloc(void *io, size_t n)
{
    (void) io;
    return calloc(1, n);
}

static void w_free(void *io, void *p)
{
    (void) io;
    free(p);
}

static const ibmc_mcast_ops_t ops = {
    .post = w_post,.flush = w_flush,.post_ctl = w_post_ctl,.post_room = w_room,
    .send_rc = w_send_rc,
    .write_board = w_write_board,.now = w_now,.wait = w_wait,.poll = w_poll,.zalloc = w_zalloc,
    .free = w_free
};

static const ibmc_mcast_params_t params = {.window = 64,.ack_every = 16,.subgroup = 2,
    .nak_timeout_us = 200,.nak_max_us = 100000,.rdma_acks = 0
};

typedef struct {
    world_t w;
    ibmc_mcast_stats_t stats;
    ibmc_mcast_engine_t eng;
    ibmc_mcast_chan_t ch;
} member_t;

/* A member of a channel of n with subgroups of 2 (co-roots above 2),
 * opened and still NEW: its state is the caller's to ask for. */
static void member_open_n(member_t * m, int n, int rank)
{
    memset(m, 0, sizeof(*m));
    m->w.room = 64;
    ibmc_mcast_engine_init(&m->eng, &ops, &m->w, &params, &m->stats, NULL);
    ibmc_mcast_chan_init(&m->ch, &m->eng, n, rank, 7, P);
    ibmc_mcast_chan_open(&m->ch, 0x1234, 1, NULL);
}

/* ... and in use, with no probe (the fake network needs none). */
static void member_init_n(member_t * m, int n, int rank)
{
    member_open_n(m, n, rank);
    ibmc_mcast_chan_set_ready(&m->ch);
}

static void member_init(member_t * m, int rank)
{
    member_init_n(m, 2, rank);
}

static int rc_kind(const member_t * m, int kind)
{
    int n = 0;
    for (int i = 0; i < m->w.nrc; i++)
        n += m->w.rc[i].h.kind == kind;
    return n;
}

static int naks(const member_t * m)
{
    int n = 0;
    for (int i = 0; i < m->w.nrc; i++)
        n += m->w.rc[i].h.kind == IBMC_MCAST_RC_NAK;
    return n;
}

/* The root's answer to a NAK arrives over RC, rtt seconds after it. */
static void retransmit(member_t * m, const sent_t * pkt, double rtt)
{
    ibmc_mcast_rc_t h = {.kind = IBMC_MCAST_RC_DATA,.context_id = 7,.epoch = 1,.root = 0 };
    unsigned char copy[PKT];
    memcpy(copy, pkt->pkt, pkt->len);
    ((ibmc_mcast_hdr_t *) copy)->flags |= IBMC_MCAST_F_RETRANSMIT;
    m->w.t += rtt;
    ibmc_mcast_rc_in(&m->ch, 0, &h, copy, pkt->len);
}

static int test_until_done(ibmc_mcast_chan_t * c)
{
    int done = 0;
    ibmc_mcast_bcast_test(c, &done);
    return done;
}

/* Real losses have taught m's channel a NAK timeout of frac times the
 * configured start (the test "losses answered in 10 us" shows how): below
 * it, the member asks for a silent tail on its own instead of waiting for
 * its root's question. */
static void learned(member_t * m, double frac)
{
    m->ch.nak_timeout = frac * params.nak_timeout_us * 1e-6;
}

/* The question root r's timer multicasts to its group (ask_group), as it
 * reaches m. */
static void asked_by(member_t * m, const member_t * r, int want_acks)
{
    ibmc_mcast_hdr_t q;
    ibmc_mcast_tx_ask(&r->ch.tx, want_acks, &q);
    ibmc_mcast_mcast_in(&m->ch, &q, sizeof(q), r->ch.rank);
}

/* Root r sends a message of len bytes at time t, all in one turn, and its
 * progress engine looks at it once: its timer on the unacknowledged
 * packets starts. */
static void root_sends_at(member_t * r, double t, const unsigned char *buf, size_t len)
{
    int release;
    r->w.t = t;
    ibmc_mcast_bcast_start(&r->ch, (void *) buf, len, r->ch.rank);
    TAP_EXPECT(test_until_done(&r->ch));
    ibmc_mcast_bcast_finish(&r->ch);
    TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
}

int main(void)
{
    static member_t root, recv;
    unsigned char data[5 * P], out[5 * P];
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (unsigned char) (i * 7 + 1);

    TAP_TEST("the default subgroup is half the ACK interval, at least 1; none without ACKs; "
             "never more than the communicator") {
        ibmc_mcast_params_t pa = {.window = 64,.ack_every = 16,.subgroup = 0 };
        TAP_EXPECT_EQ(ibmc_mcast_subgroup_size(&pa, 1024), 8);
        TAP_EXPECT_EQ(ibmc_mcast_subgroup_size(&pa, 8), 8);
        TAP_EXPECT_EQ(ibmc_mcast_subgroup_size(&pa, 5), 5);
        pa.ack_every = 1;
        TAP_EXPECT_EQ(ibmc_mcast_subgroup_size(&pa, 64), 1);
        pa.ack_every = 0;
        TAP_EXPECT_EQ(ibmc_mcast_subgroup_size(&pa, 64), 64);
        pa.ack_every = 16;
        pa.subgroup = 3;
        TAP_EXPECT_EQ(ibmc_mcast_subgroup_size(&pa, 64), 3);
    }

    TAP_TEST("a root posts a whole message that fits its window, then flushes once") {
        member_init(&root, 0);
        ibmc_mcast_bcast_start(&root.ch, data, sizeof(data), 0);
        TAP_EXPECT(test_until_done(&root.ch));
        TAP_EXPECT_EQ(root.w.nmcast, 5);
        TAP_EXPECT_EQ(root.w.flushes, 1);
        TAP_EXPECT_EQ(root.w.posts_at_flush, 5);
        TAP_EXPECT_EQ(root.stats.pkts_sent, 5);
        ibmc_mcast_bcast_finish(&root.ch);
    }

    TAP_TEST("a root whose send queue has room for 2 flushes 2, then the rest") {
        member_t *r = malloc(sizeof(*r));
        member_init(r, 0);
        r->w.room = 2;
        ibmc_mcast_bcast_start(&r->ch, data, sizeof(data), 0);
        TAP_EXPECT(!test_until_done(&r->ch));
        TAP_EXPECT_EQ(r->w.flushes, 1);
        TAP_EXPECT_EQ(r->w.posts_at_flush, 2);
        r->w.room = 64;
        TAP_EXPECT(test_until_done(&r->ch));
        TAP_EXPECT_EQ(r->w.flushes, 2);
        TAP_EXPECT_EQ(r->w.nmcast, 5);
        ibmc_mcast_chan_free(&r->ch);
        free(r);
    }

    TAP_TEST("a root's packet of another length ends the broadcast as a mismatch") {
        member_t *r = malloc(sizeof(*r)), *m = malloc(sizeof(*m));
        member_init(r, 0);
        member_init(m, 1);
        ibmc_mcast_bcast_start(&r->ch, data, 3 * P, 0);
        TAP_EXPECT(test_until_done(&r->ch));
        ibmc_mcast_bcast_start(&m->ch, out, 2 * P, 0);
        ibmc_mcast_mcast_in(&m->ch, r->w.mcast[0].pkt, r->w.mcast[0].len, 0);
        TAP_EXPECT(m->ch.mismatch);
        TAP_EXPECT(test_until_done(&m->ch));
        ibmc_mcast_bcast_finish(&m->ch);
        TAP_EXPECT_EQ(m->stats.bcasts, 0);
        ibmc_mcast_chan_free(&r->ch);
        ibmc_mcast_chan_free(&m->ch);
        free(r);
        free(m);
    }

    TAP_TEST("the last poll before a NAK finds the tail: no NAK, counted as spared") {
        member_init(&recv, 1);
        learned(&recv, 0.5);
        memset(out, 0, sizeof(out));
        ibmc_mcast_bcast_start(&recv.ch, out, sizeof(out), 0);
        for (int i = 0; i < 4; i++)
            ibmc_mcast_mcast_in(&recv.ch, root.w.mcast[i].pkt, root.w.mcast[i].len, 0);
        /* the last packet came while the process was not running */
        recv.w.feed_to = &recv.ch;
        recv.w.feed[0] = root.w.mcast[4];
        recv.w.nfeed = 1;
        TAP_EXPECT(!test_until_done(&recv.ch));
        recv.w.t = 1.0;
        TAP_EXPECT(!test_until_done(&recv.ch));
        TAP_EXPECT_EQ(recv.w.polls, 1);
        TAP_EXPECT_EQ(naks(&recv), 0);
        TAP_EXPECT_EQ(recv.stats.naks_spared, 1);
        TAP_EXPECT(test_until_done(&recv.ch));
        ibmc_mcast_bcast_finish(&recv.ch);
        TAP_EXPECT(!memcmp(out, data, sizeof(data)));
        TAP_EXPECT_EQ(recv.stats.recoveries, 0);
    }

    TAP_TEST("a timeout NAK whose data then comes by multicast raises the NAK timeout to twice "
             "the silence") {
        double before = recv.ch.nak_timeout;
        /* the root's second broadcast: its first packet comes, then the root
         * is held up before the rest */
        root.w.nmcast = 0;
        ibmc_mcast_bcast_start(&root.ch, data, 3 * P, 0);
        TAP_EXPECT(test_until_done(&root.ch));
        ibmc_mcast_bcast_finish(&root.ch);
        memset(out, 0, sizeof(out));
        ibmc_mcast_bcast_start(&recv.ch, out, 3 * P, 0);
        ibmc_mcast_mcast_in(&recv.ch, root.w.mcast[0].pkt, root.w.mcast[0].len, 0);
        TAP_EXPECT(!test_until_done(&recv.ch));
        recv.w.t += 1.5 * before;
        TAP_EXPECT(!test_until_done(&recv.ch));
        TAP_EXPECT_EQ(naks(&recv), 1);
        /* then the root's packets arrive after all, 2.5 timeouts after the first */
        recv.w.t += 1.0 * before;
        for (int i = 1; i < 3; i++)
            ibmc_mcast_mcast_in(&recv.ch, root.w.mcast[i].pkt, root.w.mcast[i].len, 0);
        TAP_EXPECT(test_until_done(&recv.ch));
        ibmc_mcast_bcast_finish(&recv.ch);
        TAP_EXPECT(!memcmp(out, data, 3 * P));
        TAP_EXPECT_EQ(recv.stats.naks_premature, 1);
        TAP_EXPECT(recv.ch.nak_timeout > 4.9 * before && recv.ch.nak_timeout < 5.1 * before);
    }

    TAP_TEST("with the timeout raised above its start, the next broadcast's silent tail waits for "
             "the root's question, which reveals the loss") {
        int before = naks(&recv);
        root.w.nmcast = 0;
        ibmc_mcast_bcast_start(&root.ch, data, 2 * P, 0);
        TAP_EXPECT(test_until_done(&root.ch));
        ibmc_mcast_bcast_finish(&root.ch);
        ibmc_mcast_bcast_start(&recv.ch, out, 2 * P, 0);
        ibmc_mcast_mcast_in(&recv.ch, root.w.mcast[0].pkt, root.w.mcast[0].len, 0);
        TAP_EXPECT(!test_until_done(&recv.ch));
        recv.w.t += 10.0 * params.nak_timeout_us * 1e-6;
        TAP_EXPECT(!test_until_done(&recv.ch));
        TAP_EXPECT_EQ(naks(&recv), before);
        asked_by(&recv, &root, 0);
        TAP_EXPECT_EQ(naks(&recv), before + 1);
        TAP_EXPECT_EQ(recv.stats.naks_asked, 1);
        /* a real loss: the retransmission fills it, and the timeout shrinks */
        double grown = recv.ch.nak_timeout;
        retransmit(&recv, &root.w.mcast[1], 10e-6);
        TAP_EXPECT(test_until_done(&recv.ch));
        ibmc_mcast_bcast_finish(&recv.ch);
        TAP_EXPECT(!memcmp(out, data, 2 * P));
        TAP_EXPECT(recv.ch.nak_timeout < grown);
        TAP_EXPECT_EQ(recv.stats.naks_premature, 1);
        TAP_EXPECT_EQ(recv.stats.recoveries, 2);
    }


    TAP_TEST("losses answered in 10 us bring the timeout below its 200 us start, not below 20 us: "
             "first revealed by the root's questions, then asked for on its own; then a message "
             "of which nothing came is asked for after it") {
        int asked = 0, own = 0;
        for (int k = 0; k < 20; k++) {
            root.w.nmcast = 0;
            ibmc_mcast_bcast_start(&root.ch, data, 2 * P, 0);
            TAP_EXPECT(test_until_done(&root.ch));
            ibmc_mcast_bcast_finish(&root.ch);
            ibmc_mcast_bcast_start(&recv.ch, out, 2 * P, 0);
            ibmc_mcast_mcast_in(&recv.ch, root.w.mcast[0].pkt, root.w.mcast[0].len, 0);
            TAP_EXPECT(!test_until_done(&recv.ch));
            recv.w.t += recv.ch.nak_timeout * 1.01;
            int before = naks(&recv);
            TAP_EXPECT(!test_until_done(&recv.ch));
            if (naks(&recv) == before) {
                /* not taught yet: the root's timer, at the same timeout, asks */
                TAP_EXPECT(!own);
                asked_by(&recv, &root, 0);
                asked++;
            } else {
                own++;
            }
            TAP_EXPECT_EQ(naks(&recv), before + 1);
            retransmit(&recv, &root.w.mcast[1], 10e-6);
            TAP_EXPECT(test_until_done(&recv.ch));
            ibmc_mcast_bcast_finish(&recv.ch);
        }
        TAP_EXPECT(asked > 0 && own > 0);
        TAP_EXPECT(recv.ch.nak_timeout < params.nak_timeout_us * 1e-6 / 4);
        TAP_EXPECT(recv.ch.nak_timeout >= 2 * 10e-6 * 0.999);
        /* having learned the fabric's losses, it asks for a message of which
         * nothing has come after its own timeout, before the root would */
        root.w.nmcast = 0;
        ibmc_mcast_bcast_start(&root.ch, data, P, 0);
        TAP_EXPECT(test_until_done(&root.ch));
        ibmc_mcast_bcast_finish(&root.ch);
        ibmc_mcast_bcast_start(&recv.ch, out, P, 0);
        TAP_EXPECT(ibmc_mcast_bcast_deadline(&recv.ch) < recv.w.t + 1.01 * recv.ch.nak_timeout);
        recv.w.t += recv.ch.nak_timeout * 1.01;
        int before = naks(&recv);
        TAP_EXPECT(!test_until_done(&recv.ch));
        TAP_EXPECT_EQ(naks(&recv), before + 1);
        retransmit(&recv, &root.w.mcast[0], 10e-6);
        TAP_EXPECT(test_until_done(&recv.ch));
        ibmc_mcast_bcast_finish(&recv.ch);
        TAP_EXPECT(!memcmp(out, data, P));
    }

    TAP_TEST("a timeout that ran out while the process was away sends no NAK and raises the "
             "timeout above its start; the tail then waits for the root's question") {
        root.w.nmcast = 0;
        ibmc_mcast_bcast_start(&root.ch, data, 2 * P, 0);
        TAP_EXPECT(test_until_done(&root.ch));
        ibmc_mcast_bcast_finish(&root.ch);
        ibmc_mcast_bcast_start(&recv.ch, out, 2 * P, 0);
        ibmc_mcast_mcast_in(&recv.ch, root.w.mcast[0].pkt, root.w.mcast[0].len, 0);
        TAP_EXPECT(!test_until_done(&recv.ch));
        int before = naks(&recv);
        /* the first look comes 3 ms after the deadline: a stall, not a loss */
        recv.w.t += recv.ch.nak_timeout + 3e-3;
        TAP_EXPECT(!test_until_done(&recv.ch));
        TAP_EXPECT_EQ(naks(&recv), before);
        TAP_EXPECT_EQ(recv.stats.naks_deferred, 1);
        TAP_EXPECT(recv.ch.nak_timeout > 5.9e-3 && recv.ch.nak_timeout < 6.1e-3);
        /* looking on time now, before and after the raised deadline: the
         * member does not ask on its own any more */
        recv.w.t += 5.5e-3;
        TAP_EXPECT(!test_until_done(&recv.ch));
        TAP_EXPECT_EQ(naks(&recv), before);
        recv.w.t += 1e-3;
        TAP_EXPECT(!test_until_done(&recv.ch));
        TAP_EXPECT_EQ(naks(&recv), before);
        asked_by(&recv, &root, 0);
        TAP_EXPECT_EQ(naks(&recv), before + 1);
        TAP_EXPECT_EQ(recv.stats.naks_deferred, 1);
        retransmit(&recv, &root.w.mcast[1], 10e-6);
        TAP_EXPECT(test_until_done(&recv.ch));
        ibmc_mcast_bcast_finish(&recv.ch);
        TAP_EXPECT(!memcmp(out, data, 2 * P));
    }

    TAP_TEST("the deadline says when a receiver's NAK is due: nothing before it, a NAK after; "
             "untaught, the longest timeout") {
        member_t *r = malloc(sizeof(*r)), *m = malloc(sizeof(*m));
        member_init(r, 0);
        member_init(m, 1);
        learned(m, 0.5);
        ibmc_mcast_bcast_start(&r->ch, data, 3 * P, 0);
        TAP_EXPECT(test_until_done(&r->ch));
        ibmc_mcast_bcast_finish(&r->ch);
        TAP_EXPECT(ibmc_mcast_bcast_deadline(&r->ch) == HUGE_VAL);
        m->w.t = 5.0;
        ibmc_mcast_bcast_start(&m->ch, out, 3 * P, 0);
        ibmc_mcast_mcast_in(&m->ch, r->w.mcast[0].pkt, r->w.mcast[0].len, 0);
        TAP_EXPECT(!test_until_done(&m->ch));
        double due = ibmc_mcast_bcast_deadline(&m->ch);
        TAP_EXPECT(due > 5.0 && due < 5.0 + 0.51 * params.nak_timeout_us * 1e-6);
        /* untaught, it waits for the root: the deadline is the liveness
         * check after the longest timeout */
        learned(m, 1.0);
        TAP_EXPECT(ibmc_mcast_bcast_deadline(&m->ch) > 5.0 + 0.99 * params.nak_max_us * 1e-6);
        learned(m, 0.5);
        m->w.t = due - 1e-7;
        TAP_EXPECT(!test_until_done(&m->ch));
        TAP_EXPECT_EQ(naks(m), 0);
        m->w.t = due + 1e-9;
        TAP_EXPECT(!test_until_done(&m->ch));
        TAP_EXPECT_EQ(naks(m), 1);
        /* the NAK restarts the timer, doubled */
        double next = ibmc_mcast_bcast_deadline(&m->ch);
        TAP_EXPECT(next > due + 1.9 * (due - 5.0) && next < due + 2.1 * (due - 5.0));
        for (int i = 1; i < 3; i++)
            ibmc_mcast_mcast_in(&m->ch, r->w.mcast[i].pkt, r->w.mcast[i].len, 0);
        TAP_EXPECT(ibmc_mcast_bcast_deadline(&m->ch) <= m->w.t);
        TAP_EXPECT(test_until_done(&m->ch));
        ibmc_mcast_bcast_finish(&m->ch);
        ibmc_mcast_chan_free(&r->ch);
        ibmc_mcast_chan_free(&m->ch);
        free(r);
        free(m);
    }

    TAP_TEST("the deadline says when a blocked root asks its laggards") {
        member_t *r = malloc(sizeof(*r));
        member_init(r, 0);
        unsigned char *big = calloc(1, 80 * P);
        r->w.t = 1.0;
        ibmc_mcast_bcast_start(&r->ch, big, 80 * P, 0);
        TAP_EXPECT(!test_until_done(&r->ch));   /* the window (64) is full */
        double due = ibmc_mcast_bcast_deadline(&r->ch);
        TAP_EXPECT(due > 1.0 && due < 1.0 + 1.01 * params.nak_timeout_us * 1e-6);
        int before = r->w.nrc;
        r->w.t = due - 1e-7;
        TAP_EXPECT(!test_until_done(&r->ch));
        TAP_EXPECT(r->w.nrc == before && r->w.nctl == 0);
        r->w.t = due + 1e-9;
        TAP_EXPECT(!test_until_done(&r->ch));
        TAP_EXPECT_EQ(r->w.nctl, 1);
        TAP_EXPECT(r->stats.ack_probes >= 1);
        ibmc_mcast_chan_free(&r->ch);
        free(big);
        free(r);
    }

    TAP_TEST("a member of which nothing of the message has come, and which has not learned a "
             "timeout from losses, sends no NAK; after the longest timeout it sends its root an "
             "ACK, to learn it is alive") {
        member_t *m = malloc(sizeof(*m));
        member_init(m, 1);
        m->w.t = 5.0;
        ibmc_mcast_bcast_start(&m->ch, out, 2 * P, 0);
        double due = ibmc_mcast_bcast_deadline(&m->ch);
        TAP_EXPECT(due > 5.0 + 0.99 * params.nak_max_us * 1e-6 &&
                   due < 5.0 + 1.01 * params.nak_max_us * 1e-6);
        /* many NAK timeouts, and the last poll before one finds nothing */
        for (int i = 1; i <= 100; i++) {
            m->w.t = 5.0 + i * 0.99 * params.nak_max_us * 1e-6 / 100;
            TAP_EXPECT(!test_until_done(&m->ch));
        }
        TAP_EXPECT_EQ(m->w.nrc, 0);
        m->w.t = due + 1e-9;
        TAP_EXPECT(!test_until_done(&m->ch));
        TAP_EXPECT(m->w.nrc == 1 && m->w.rc[0].h.kind == IBMC_MCAST_RC_ACK && m->w.rc[0].to == 0 &&
                   m->w.rc[0].h.a == 0);
        TAP_EXPECT_EQ(m->stats.naks_sent, 0);
        ibmc_mcast_chan_free(&m->ch);
        free(m);
    }

    TAP_TEST("a root whose last packets stay unacknowledged asks after the NAK timeout, by "
             "multicast even for one member behind, naming where it sent to; a member that "
             "lost all of them NAKs at once and completes") {
        member_t *r = malloc(sizeof(*r)), *m = malloc(sizeof(*m));
        member_init(r, 0);
        member_init(m, 1);
        int release;
        r->w.t = m->w.t = 1.0;
        TAP_EXPECT(ibmc_mcast_chan_deadline(&r->ch) == HUGE_VAL);       /* nothing sent */
        ibmc_mcast_bcast_start(&r->ch, data, 2 * P, 0);
        TAP_EXPECT(test_until_done(&r->ch));
        ibmc_mcast_bcast_finish(&r->ch);
        memset(out, 0, sizeof(out));
        ibmc_mcast_bcast_start(&m->ch, out, 2 * P, 0);
        /* both multicast packets are lost on the way to m */
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        double due = ibmc_mcast_chan_deadline(&r->ch);
        TAP_EXPECT(due > 1.0 && due < 1.0 + 1.01 * params.nak_timeout_us * 1e-6);
        r->w.t = due - 1e-7;
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        TAP_EXPECT_EQ(r->w.nrc, 0);
        r->w.t = due + 1e-9;
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        /* one member behind, asked by multicast all the same: an RC question
         * could overtake the packets it is about */
        TAP_EXPECT_EQ(r->w.nrc, 0);
        ibmc_mcast_hdr_t q;
        memset(&q, 0, sizeof(q));
        if (r->w.nctl == 1)
            memcpy(&q, r->w.ctl[0].pkt, sizeof(q));
        TAP_EXPECT(r->w.nctl == 1 && q.type == IBMC_MCAST_ASK && q.seq == 2 &&
                   q.flags == IBMC_MCAST_F_ACK_REQ);
        TAP_EXPECT(r->stats.ack_probes == 1 && r->stats.asks_multicast == 1);
        /* m: the question reveals the loss; a NAK for both, marked a gap */
        m->w.t = r->w.t;
        ibmc_mcast_mcast_in(&m->ch, &q, sizeof(q), 0);
        int nak = -1;
        for (int i = 0; i < m->w.nrc; i++)
            if (m->w.rc[i].h.kind == IBMC_MCAST_RC_NAK)
                nak = i;
        TAP_EXPECT(nak >= 0 && naks(m) == 1);
        nak = nak < 0 ? 0 : nak;        /* checked on, and failing, without one */
        TAP_EXPECT(m->w.rc[nak].h.a == 0 && m->w.rc[nak].h.b == 2 &&
                   (m->w.rc[nak].h.flags & IBMC_MCAST_RC_F_GAP) && m->w.rc[nak].to == 0);
        TAP_EXPECT_EQ(m->stats.naks_asked, 1);
        /* the root answers from its ring; the copies complete m's message */
        r->w.nrc = 0;
        ibmc_mcast_rc_in(&r->ch, 1, &m->w.rc[nak].h, NULL, 0);
        TAP_EXPECT_EQ(rc_kind(r, IBMC_MCAST_RC_DATA), 2);
        for (int i = 0; i < r->w.nrc; i++)
            ibmc_mcast_rc_in(&m->ch, 0, &r->w.rc[i].h, r->w.rc[i].pkt, r->w.rc[i].len);
        TAP_EXPECT(test_until_done(&m->ch));
        ibmc_mcast_bcast_finish(&m->ch);
        TAP_EXPECT(!memcmp(out, data, 2 * P));
        TAP_EXPECT_EQ(m->stats.duplicates, 0);
        /* m acknowledges its completed message: the root's tail is settled
         * and nothing more is asked */
        int acks = 0;
        for (int i = 0; i < m->w.nrc; i++)
            if (m->w.rc[i].h.kind == IBMC_MCAST_RC_ACK && m->w.rc[i].to == 0) {
                TAP_EXPECT_EQ(m->w.rc[i].h.a, 2);
                ibmc_mcast_rc_in(&r->ch, 1, &m->w.rc[i].h, NULL, 0);
                acks++;
            }
        TAP_EXPECT_EQ(acks, 1);
        TAP_EXPECT(ibmc_mcast_chan_deadline(&r->ch) == HUGE_VAL);
        r->w.nrc = 0;
        r->w.nctl = 0;
        r->w.t += 1.0;
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        TAP_EXPECT(r->w.nrc == 0 && r->w.nctl == 0);
        TAP_EXPECT_EQ(m->stats.naks_sent, 1);
        ibmc_mcast_chan_free(&r->ch);
        ibmc_mcast_chan_free(&m->ch);
        free(r);
        free(m);
    }

    TAP_TEST("a root that looks at its unacknowledged packets more than one wait late (it was "
             "not running) asks nothing then, and asks after twice the wait") {
        member_t *r = malloc(sizeof(*r));
        member_init(r, 0);
        int release;
        root_sends_at(r, 1.0, data, P);
        double wait = params.nak_timeout_us * 1e-6;
        r->w.t = 1.0 + 2.5 * wait;
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        TAP_EXPECT_EQ(r->w.nrc, 0);
        double due = ibmc_mcast_chan_deadline(&r->ch);
        TAP_EXPECT(due > r->w.t + 1.99 * wait && due < r->w.t + 2.01 * wait);
        r->w.t = due + 1e-9;
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        TAP_EXPECT(r->w.nctl == 1 && r->stats.ack_probes == 1);
        ibmc_mcast_chan_free(&r->ch);
        free(r);
    }

    TAP_TEST("a NAK for packets every member has acknowledged since (they were on their way "
             "when the question came) doubles the wait before the root's next question, once "
             "per question, and is answered with nothing") {
        member_t *r = malloc(sizeof(*r));
        member_init(r, 0);
        int release;
        double wait = params.nak_timeout_us * 1e-6;
        root_sends_at(r, 1.0, data, 2 * P);
        r->w.t = ibmc_mcast_chan_deadline(&r->ch) + 1e-9;
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        TAP_EXPECT(r->w.nctl == 1 && r->stats.ack_probes == 1);
        /* member 1 had both packets coming: its ACK is read before the NAK
         * the question drew from it */
        ibmc_mcast_rc_t ack = {.kind = IBMC_MCAST_RC_ACK,.context_id = 7,.epoch = 1,.a = 2,
            .root = -1
        };
        ibmc_mcast_rc_t nak = {.kind = IBMC_MCAST_RC_NAK,.context_id = 7,.epoch = 1,.a = 0,.b = 2,
            .root = 0,.flags = IBMC_MCAST_RC_F_GAP
        };
        r->w.nrc = 0;
        TAP_EXPECT_EQ(ibmc_mcast_rc_in(&r->ch, 1, &ack, NULL, 0), 0);
        TAP_EXPECT_EQ(ibmc_mcast_rc_in(&r->ch, 1, &nak, NULL, 0), 0);
        TAP_EXPECT_EQ(rc_kind(r, IBMC_MCAST_RC_DATA), 0);
        TAP_EXPECT_EQ(r->ch.tx.stale_naks, 2);
        TAP_EXPECT(fabs(r->ch.nak_timeout - 2 * wait) < 1e-12);
        /* a second stale NAK for the same question teaches nothing more */
        TAP_EXPECT_EQ(ibmc_mcast_rc_in(&r->ch, 1, &nak, NULL, 0), 0);
        TAP_EXPECT(fabs(r->ch.nak_timeout - 2 * wait) < 1e-12);
        /* the next message's question comes after the doubled wait */
        root_sends_at(r, 2.0, data, P);
        double due = ibmc_mcast_chan_deadline(&r->ch);
        TAP_EXPECT(due > 2.0 + 1.99 * wait && due < 2.0 + 2.01 * wait);
        ibmc_mcast_chan_free(&r->ch);
        free(r);
    }

    TAP_TEST("a root that has seen losses asks a stalled group by multicast, first for losses "
             "only, saying where it sent to, then for ACKs too; unanswered, the next question "
             "goes over RC, to its co-roots before the leaves of its own subgroup; each after "
             "twice the wait") {
        /* 8 members, subgroups of 2, root 0: it hears from leaf 1 and from
         * co-roots 2 and 4 (6 is below 2) */
        member_t *r = malloc(sizeof(*r));
        member_init_n(r, 8, 0);
        learned(r, 0.5);
        int release;
        root_sends_at(r, 1.0, data, P);
        int nrc = r->w.nrc;     /* the relays to 2 and 4 */
        double wait = r->ch.nak_timeout;
        r->w.t = ibmc_mcast_chan_deadline(&r->ch) + 1e-9;
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        TAP_EXPECT_EQ(r->w.nctl, 1);
        TAP_EXPECT_EQ(r->w.nrc, nrc);
        ibmc_mcast_hdr_t q;
        memcpy(&q, r->w.ctl[0].pkt, sizeof(q));
        TAP_EXPECT(r->w.ctl[0].len == sizeof(q) && q.type == IBMC_MCAST_ASK && q.seq == 1 &&
                   q.payload_len == 0 && q.context_id == 7 && q.epoch == 1 &&
                   q.job_key == 0x1234 && q.flags == 0);
        TAP_EXPECT(r->stats.ack_probes == 1 && r->stats.asks_multicast == 1);
        double due = ibmc_mcast_chan_deadline(&r->ch);
        TAP_EXPECT(due > r->w.t + 1.99 * wait && due < r->w.t + 2.01 * wait);
        r->w.t = due + 1e-9;
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        TAP_EXPECT_EQ(r->w.nctl, 2);
        TAP_EXPECT_EQ(r->w.nrc, nrc);
        memcpy(&q, r->w.ctl[1].pkt, sizeof(q));
        TAP_EXPECT(q.type == IBMC_MCAST_ASK && q.seq == 1 && q.flags == IBMC_MCAST_F_ACK_REQ);
        due = ibmc_mcast_chan_deadline(&r->ch);
        TAP_EXPECT(due > r->w.t + 3.99 * wait && due < r->w.t + 4.01 * wait);
        r->w.t = due + 1e-9;
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        TAP_EXPECT_EQ(r->w.nctl, 2);
        int to[8], n = 0;
        for (int i = nrc; i < r->w.nrc && n < 8; i++)
            if (r->w.rc[i].h.kind == IBMC_MCAST_RC_ACK_REQ && r->w.rc[i].h.a == 1)
                to[n++] = r->w.rc[i].to;
        TAP_EXPECT(n == 3 && to[0] == 2 && to[1] == 4 && to[2] == 1);
        TAP_EXPECT(r->stats.ack_probes == 5 && r->stats.asks_multicast == 2);
        ibmc_mcast_chan_free(&r->ch);
        free(r);
    }

    TAP_TEST("a root that has seen no loss asks a stalled group for ACKs at once, by one "
             "multicast packet; unanswered, it asks over RC after twice the wait") {
        member_t *r = malloc(sizeof(*r));
        member_init_n(r, 8, 0);
        int release;
        root_sends_at(r, 1.0, data, P);
        int nrc = r->w.nrc;
        r->w.t = ibmc_mcast_chan_deadline(&r->ch) + 1e-9;
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        ibmc_mcast_hdr_t q;
        memcpy(&q, r->w.ctl[0].pkt, sizeof(q));
        TAP_EXPECT(r->w.nctl == 1 && q.type == IBMC_MCAST_ASK && q.flags == IBMC_MCAST_F_ACK_REQ);
        TAP_EXPECT_EQ(r->w.nrc, nrc);
        r->w.t = ibmc_mcast_chan_deadline(&r->ch) + 1e-9;
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        TAP_EXPECT_EQ(r->w.nctl, 1);
        TAP_EXPECT_EQ(rc_kind(r, IBMC_MCAST_RC_ACK_REQ), 3);
        TAP_EXPECT(r->stats.ack_probes == 4 && r->stats.asks_multicast == 1);
        ibmc_mcast_chan_free(&r->ch);
        free(r);
    }

    TAP_TEST("a root whose question cannot go to the group now asks over RC at once") {
        member_t *r = malloc(sizeof(*r));
        member_init_n(r, 8, 0);
        int release;
        r->w.no_ctl = 1;
        root_sends_at(r, 1.0, data, P);
        int nrc = r->w.nrc;
        r->w.t = ibmc_mcast_chan_deadline(&r->ch) + 1e-9;
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        TAP_EXPECT_EQ(r->w.nctl, 0);
        TAP_EXPECT_EQ(r->w.nrc - nrc, 3);
        TAP_EXPECT(r->stats.ack_probes == 3 && r->stats.asks_multicast == 0);
        ibmc_mcast_chan_free(&r->ch);
        free(r);
    }

    TAP_TEST("the questions to the group: a member that lost the message NAKs it; one that has "
             "all stays silent, and when asked for ACKs too, ACKs, once; a co-root's aggregate "
             "goes up when its leaf has answered") {
        /* 4 members, subgroups of 2, root 0: leaf 1 acknowledges to 0;
         * co-root 2 to 0, for itself and its leaf 3 */
        enum { N = 4 };
        member_t *r = malloc(sizeof(*r)), *m[N];
        member_init_n(r, N, 0);
        learned(r, 0.5);
        root_sends_at(r, 1.0, data, P);
        r->w.t = ibmc_mcast_chan_deadline(&r->ch) + 1e-9;
        int release;
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        r->w.t = ibmc_mcast_chan_deadline(&r->ch) + 1e-9;
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        TAP_EXPECT_EQ(r->w.nctl, 2);
        const sent_t *q = &r->w.ctl[1], *q0 = &r->w.ctl[0];
        unsigned char got[N][P];
        for (int i = 1; i < N; i++) {
            m[i] = malloc(sizeof(*m[i]));
            member_init_n(m[i], N, i);
            m[i]->w.t = r->w.t;
            memset(got[i], 0, P);
            ibmc_mcast_bcast_start(&m[i]->ch, got[i], P, 0);
            if (i > 1)          /* the packet reaches 2 and 3, not 1 */
                ibmc_mcast_mcast_in(&m[i]->ch, r->w.mcast[0].pkt, r->w.mcast[0].len, 0);
            m[i]->w.nrc = 0;
            /* the first question: losses only */
            ibmc_mcast_mcast_in(&m[i]->ch, q0->pkt, q0->len, 0);
            TAP_EXPECT_EQ(m[i]->w.nrc, i == 1);
            TAP_EXPECT_EQ(naks(m[i]), i == 1);
            m[i]->w.nrc = 0;
            ibmc_mcast_mcast_in(&m[i]->ch, q->pkt, q->len, 0);
        }
        /* 1: a NAK of the message, marked a gap, to the root; no ACK */
        TAP_EXPECT(m[1]->w.nrc == 1 && m[1]->w.rc[0].h.kind == IBMC_MCAST_RC_NAK &&
                   m[1]->w.rc[0].to == 0 && m[1]->w.rc[0].h.a == 0 && m[1]->w.rc[0].h.b == 1 &&
                   (m[1]->w.rc[0].h.flags & IBMC_MCAST_RC_F_GAP));
        TAP_EXPECT_EQ(m[1]->stats.naks_asked, 2);
        /* 3: its ACK, to its co-root */
        TAP_EXPECT(m[3]->w.nrc == 1 && m[3]->w.rc[0].h.kind == IBMC_MCAST_RC_ACK &&
                   m[3]->w.rc[0].to == 2 && m[3]->w.rc[0].h.a == 1);
        /* 2: nothing yet, its leaf has not answered */
        TAP_EXPECT_EQ(rc_kind(m[2], IBMC_MCAST_RC_ACK), 0);
        ibmc_mcast_rc_in(&m[2]->ch, 3, &m[3]->w.rc[0].h, NULL, 0);
        TAP_EXPECT(m[2]->w.nrc == 1 && m[2]->w.rc[0].h.kind == IBMC_MCAST_RC_ACK &&
                   m[2]->w.rc[0].to == 0 && m[2]->w.rc[0].h.a == 1);
        /* heard twice (a duplicate): nothing more from 3 */
        ibmc_mcast_mcast_in(&m[3]->ch, q->pkt, q->len, 0);
        TAP_EXPECT_EQ(m[3]->w.nrc, 1);
        /* 1's NAK is answered; its message completes and it ACKs at once */
        r->w.nrc = 0;
        ibmc_mcast_rc_in(&r->ch, 1, &m[1]->w.rc[0].h, NULL, 0);
        TAP_EXPECT_EQ(rc_kind(r, IBMC_MCAST_RC_DATA), 1);
        ibmc_mcast_rc_in(&m[1]->ch, 0, &r->w.rc[0].h, r->w.rc[0].pkt, r->w.rc[0].len);
        for (int i = 1; i < N; i++) {
            TAP_EXPECT(test_until_done(&m[i]->ch));
            ibmc_mcast_bcast_finish(&m[i]->ch);
            TAP_EXPECT(!memcmp(got[i], data, P));
        }
        TAP_EXPECT_EQ(rc_kind(m[1], IBMC_MCAST_RC_ACK), 1);
        /* the root's ACKs from 1 and 2 settle its tail */
        for (int i = 1; i <= 2; i++)
            for (int k = 0; k < m[i]->w.nrc; k++)
                if (m[i]->w.rc[k].h.kind == IBMC_MCAST_RC_ACK && m[i]->w.rc[k].to == 0)
                    ibmc_mcast_rc_in(&r->ch, i, &m[i]->w.rc[k].h, NULL, 0);
        TAP_EXPECT(ibmc_mcast_chan_deadline(&r->ch) == HUGE_VAL);
        for (int i = 1; i < N; i++) {
            ibmc_mcast_chan_free(&m[i]->ch);
            free(m[i]);
        }
        ibmc_mcast_chan_free(&r->ch);
        free(r);
    }

    TAP_TEST("a question to the group that fails a check is dropped, counted, and moves nothing: "
             "another job's, an old epoch's, from outside the communicator, with a payload, "
             "past the window; one from a member that is not the message's root asks for nothing") {
        member_t *m = malloc(sizeof(*m));
        member_init_n(m, 4, 1);
        ibmc_mcast_bcast_start(&m->ch, out, P, 0);
        ibmc_mcast_hdr_t good = {.magic = IBMC_MCAST_MAGIC,.version = IBMC_MCAST_VERSION,
            .type = IBMC_MCAST_ASK,.context_id = 7,.epoch = 1,.seq = 1,.job_key = 0x1234
        }, h;
        unsigned char buf[sizeof(h) + 1] = { 0 };
        uint64_t dropped = m->stats.dropped;
        h = good;
        h.job_key ^= 1;
        ibmc_mcast_mcast_in(&m->ch, &h, sizeof(h), 0);
        TAP_EXPECT_EQ(m->ch.rx.count[IBMC_MCAST_RX_FOREIGN], 1);
        h = good;
        h.epoch = 0;
        ibmc_mcast_mcast_in(&m->ch, &h, sizeof(h), 0);
        TAP_EXPECT_EQ(m->ch.rx.count[IBMC_MCAST_RX_STALE_EPOCH], 1);
        ibmc_mcast_mcast_in(&m->ch, &good, sizeof(good), -1);
        TAP_EXPECT_EQ(m->ch.rx.count[IBMC_MCAST_RX_FOREIGN], 2);
        h = good;
        h.payload_len = 1;
        memcpy(buf, &h, sizeof(h));
        ibmc_mcast_mcast_in(&m->ch, buf, sizeof(buf), 0);
        ibmc_mcast_mcast_in(&m->ch, &h, sizeof(h), 0);
        TAP_EXPECT_EQ(m->ch.rx.count[IBMC_MCAST_RX_MALFORMED], 2);
        h = good;
        h.flags = IBMC_MCAST_F_RETRANSMIT;
        ibmc_mcast_mcast_in(&m->ch, &h, sizeof(h), 0);
        TAP_EXPECT_EQ(m->ch.rx.count[IBMC_MCAST_RX_MALFORMED], 3);
        h = good;
        h.seq = params.window + 1;
        ibmc_mcast_mcast_in(&m->ch, &h, sizeof(h), 0);
        TAP_EXPECT_EQ(m->ch.rx.count[IBMC_MCAST_RX_OUT_OF_WINDOW], 1);
        TAP_EXPECT_EQ(m->stats.dropped, dropped + 7);
        ibmc_mcast_mcast_in(&m->ch, &good, sizeof(good), 3);    /* member 3's question */
        TAP_EXPECT_EQ(m->w.nrc, 0);
        TAP_EXPECT_EQ(m->stats.naks_asked, 0);
        TAP_EXPECT(ibmc_mcast_rx_nothing_seen(&m->ch.rx));
        /* the genuine question from the root is still believed */
        ibmc_mcast_mcast_in(&m->ch, &good, sizeof(good), 0);
        TAP_EXPECT(naks(m) == 1 && m->stats.naks_asked == 1);
        ibmc_mcast_chan_free(&m->ch);
        free(m);
    }

    TAP_TEST("a root that asks again while the loss is still there is answered with the NAK "
             "again; what is not below where it sent to is not asked for") {
        member_t *m = malloc(sizeof(*m));
        member_init(m, 1);
        ibmc_mcast_bcast_start(&m->ch, out, 3 * P, 0);
        ibmc_mcast_rc_t req = {.kind = IBMC_MCAST_RC_ACK_REQ,.context_id = 7,.epoch = 1,.a = 2,
            .root = -1
        };
        ibmc_mcast_rc_in(&m->ch, 0, &req, NULL, 0);
        ibmc_mcast_rc_in(&m->ch, 0, &req, NULL, 0);
        int n = 0;
        for (int i = 0; i < m->w.nrc; i++)
            if (m->w.rc[i].h.kind == IBMC_MCAST_RC_NAK) {
                n++;
                TAP_EXPECT(m->w.rc[i].h.a == 0 && m->w.rc[i].h.b == 2);   /* not the third */
            }
        TAP_EXPECT_EQ(n, 2);
        TAP_EXPECT_EQ(m->stats.naks_asked, 2);
        ibmc_mcast_chan_free(&m->ch);
        free(m);
    }

    TAP_TEST("an ACK request from a member that is neither the message's root nor its co-root "
             "reveals nothing: no NAK") {
        /* 3 members, subgroups of 2: for root 0, member 1 acknowledges to
         * 0, and member 2 is a co-root, not member 1's */
        member_t *m = malloc(sizeof(*m));
        member_init_n(m, 3, 1);
        ibmc_mcast_bcast_start(&m->ch, out, 2 * P, 0);
        ibmc_mcast_rc_t req = {.kind = IBMC_MCAST_RC_ACK_REQ,.context_id = 7,.epoch = 1,.a = 2,
            .root = -1
        };
        ibmc_mcast_rc_in(&m->ch, 2, &req, NULL, 0);     /* for member 2's own messages */
        req.root = 0;
        ibmc_mcast_rc_in(&m->ch, 2, &req, NULL, 0);     /* naming root 0 */
        TAP_EXPECT_EQ(naks(m), 0);
        TAP_EXPECT_EQ(m->stats.naks_asked, 0);
        TAP_EXPECT(ibmc_mcast_rx_nothing_seen(&m->ch.rx));
        ibmc_mcast_chan_free(&m->ch);
        free(m);
    }

    ibmc_mcast_chan_free(&root.ch);
    ibmc_mcast_chan_free(&recv.ch);
    TAP_TEST("a co-root completes its broadcast before it relays; the relays go at its next turn") {
        enum { N = 16 };
        ibmc_mcast_plan_t plan = ibmc_mcast_plan(N, 2, 0);
        int kids[N], head = -1, nk = 0;
        for (int m = 1; m < N && head < 0; m++)
            if (ibmc_mcast_plan_is_coroot(&plan, m) &&
                (nk = ibmc_mcast_plan_children(&plan, m, kids, N)) > 0)
                head = m;
        TAP_EXPECT(head > 0);
        member_t *r = malloc(sizeof(*r)), *h = malloc(sizeof(*h));
        member_init_n(r, N, 0);
        member_init_n(h, N, head);
        ibmc_mcast_bcast_start(&r->ch, data, 2 * P, 0);
        TAP_EXPECT(test_until_done(&r->ch));
        memset(out, 0, sizeof(out));
        ibmc_mcast_bcast_start(&h->ch, out, 2 * P, 0);
        /* the first packet's relays wait for the co-root's next entry: the
         * second packet; the second's wait past the broadcast's end */
        ibmc_mcast_mcast_in(&h->ch, r->w.mcast[0].pkt, r->w.mcast[0].len, 0);
        TAP_EXPECT_EQ(rc_kind(h, IBMC_MCAST_RC_RELAY), 0);
        ibmc_mcast_mcast_in(&h->ch, r->w.mcast[1].pkt, r->w.mcast[1].len, 0);
        TAP_EXPECT_EQ(rc_kind(h, IBMC_MCAST_RC_RELAY), nk);
        TAP_EXPECT(test_until_done(&h->ch));
        TAP_EXPECT_EQ(rc_kind(h, IBMC_MCAST_RC_RELAY), nk);
        ibmc_mcast_bcast_finish(&h->ch);
        TAP_EXPECT(!memcmp(out, data, 2 * P));
        int release;
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&h->ch, &release), 0);
        TAP_EXPECT_EQ(rc_kind(h, IBMC_MCAST_RC_RELAY), 2 * nk);
        TAP_EXPECT_EQ(h->stats.relays, (uint64_t) (2 * nk));
        /* each relay carries its packet as kept */
        int seen0 = 0, seen1 = 0;
        for (int i = 0; i < h->w.nrc; i++)
            if (h->w.rc[i].h.kind == IBMC_MCAST_RC_RELAY) {
                seen0 += !memcmp(h->w.rc[i].pkt, r->w.mcast[0].pkt, r->w.mcast[0].len);
                seen1 += !memcmp(h->w.rc[i].pkt, r->w.mcast[1].pkt, r->w.mcast[1].len);
            }
        TAP_EXPECT_EQ(seen0, nk);
        TAP_EXPECT_EQ(seen1, nk);
        ibmc_mcast_chan_free(&r->ch);
        ibmc_mcast_chan_free(&h->ch);
        free(r);
        free(h);
    }

    TAP_TEST("a co-root reports its leaf and child co-root to its parent co-root, naming the root") {
        /* 16 members, subgroups of 2, root 0: groups g = m / 2, g's parent
         * (g - 1) / 2; co-root 6 (g3) has leaf 7, child
         * co-root 14 (g7) and parent co-root 2 (g1) */
        enum { N = 16, HEAD = 6, LEAF = 7, CHILD = 14, PARENT = 2 };
        ibmc_mcast_plan_t plan = ibmc_mcast_plan(N, 2, 0);
        TAP_EXPECT_EQ(ibmc_mcast_plan_ack_to(&plan, HEAD), PARENT);
        TAP_EXPECT_EQ(ibmc_mcast_plan_parent(&plan, CHILD), HEAD);
        member_t *r = malloc(sizeof(*r)), *h = malloc(sizeof(*h));
        member_init_n(r, N, 0);
        member_init_n(h, N, HEAD);
        ibmc_mcast_bcast_start(&r->ch, data, P, 0);
        TAP_EXPECT(test_until_done(&r->ch));
        ibmc_mcast_bcast_start(&h->ch, out, P, 0);
        ibmc_mcast_mcast_in(&h->ch, r->w.mcast[0].pkt, r->w.mcast[0].len, 0);
        TAP_EXPECT(test_until_done(&h->ch));
        ibmc_mcast_bcast_finish(&h->ch);
        ibmc_mcast_rc_t ack = {.kind = IBMC_MCAST_RC_ACK,.context_id = 7,.epoch = 1,.a = 1,.root = -1 };
        ibmc_mcast_rc_t req = {.kind = IBMC_MCAST_RC_ACK_REQ,.context_id = 7,.epoch = 1,.a = 1,
            .root = 0
        };
        ibmc_mcast_rc_in(&h->ch, LEAF, &ack, NULL, 0);
        /* its parent asks: the child co-root holds the aggregate at 0, so
         * 0 goes up, and the child is asked in turn, for root 0, told where
         * the root said it had sent to */
        h->w.nrc = 0;
        ibmc_mcast_rc_in(&h->ch, PARENT, &req, NULL, 0);
        int up = -1, asked = 0;
        for (int i = 0; i < h->w.nrc; i++) {
            const sent_t *m = &h->w.rc[i];
            if (m->h.kind == IBMC_MCAST_RC_ACK && m->to == PARENT && m->h.root == 0)
                up = (int) m->h.a;
            asked += m->h.kind == IBMC_MCAST_RC_ACK_REQ && m->to == CHILD && m->h.root == 0 &&
                m->h.a == 1;
        }
        TAP_EXPECT_EQ(up, 0);
        TAP_EXPECT_EQ(asked, 1);
        /* the leaf claims to be a child co-root: dropped, counted, no report */
        ack.root = 0;
        h->w.nrc = 0;
        uint64_t dropped = h->stats.dropped;
        ibmc_mcast_rc_in(&h->ch, LEAF, &ack, NULL, 0);
        TAP_EXPECT_EQ(h->stats.dropped, dropped + 1);
        TAP_EXPECT_EQ(h->w.nrc, 0);
        /* a root past the communicator, in an ACK or an ACK request: dropped */
        ack.root = N;
        req.root = N;
        ibmc_mcast_rc_in(&h->ch, CHILD, &ack, NULL, 0);
        ibmc_mcast_rc_in(&h->ch, PARENT, &req, NULL, 0);
        TAP_EXPECT_EQ(h->stats.dropped, dropped + 3);
        TAP_EXPECT_EQ(h->w.nrc, 0);
        /* NAKs from the leaf: for root 0's packet, answered from the kept
         * copy; for the same position named as another root's, not (the
         * copy is root 0's, and the leaf's plan would refuse it); for a
         * root past the communicator, dropped and counted */
        ibmc_mcast_hdr_t ph;
        memcpy(&ph, r->w.mcast[0].pkt, sizeof(ph));
        ibmc_mcast_rc_t nak = {.kind = IBMC_MCAST_RC_NAK,.context_id = 7,.epoch = 1,.a = ph.seq,
            .b = 1,.root = 0
        };
        ibmc_mcast_rc_in(&h->ch, LEAF, &nak, NULL, 0);
        TAP_EXPECT(h->w.nrc == 1 && h->w.rc[0].h.kind == IBMC_MCAST_RC_DATA &&
                   h->w.rc[0].to == LEAF && h->w.rc[0].h.root == 0);
        h->w.nrc = 0;
        nak.root = PARENT;
        ibmc_mcast_rc_in(&h->ch, LEAF, &nak, NULL, 0);
        TAP_EXPECT_EQ(h->w.nrc, 0);
        nak.root = N;
        ibmc_mcast_rc_in(&h->ch, LEAF, &nak, NULL, 0);
        TAP_EXPECT_EQ(h->w.nrc, 0);
        TAP_EXPECT_EQ(h->stats.dropped, dropped + 4);
        ack.root = 0;
        /* and a child's aggregate to the same co-root while its channel is
         * not yet set up (being probed) */
        member_t *pr = malloc(sizeof(*pr));
        member_open_n(pr, N, HEAD);
        ibmc_mcast_chan_set_probing(&pr->ch);
        ibmc_mcast_rc_in(&pr->ch, CHILD, &ack, NULL, 0);
        TAP_EXPECT_EQ(pr->stats.dropped, 1);
        TAP_EXPECT_EQ(pr->w.nrc, 0);
        ibmc_mcast_chan_free(&pr->ch);
        free(pr);
        TAP_EXPECT_EQ(h->stats.dropped, dropped + 4);
        TAP_EXPECT_EQ(h->w.nrc, 0);
        /* the child's aggregate for root 0 completes the subtree: it goes up */
        ibmc_mcast_rc_in(&h->ch, CHILD, &ack, NULL, 0);
        up = -1;
        for (int i = 0; i < h->w.nrc; i++)
            if (h->w.rc[i].h.kind == IBMC_MCAST_RC_ACK && h->w.rc[i].to == PARENT &&
                h->w.rc[i].h.root == 0)
                up = (int) h->w.rc[i].h.a;
        TAP_EXPECT_EQ(up, 1);
        TAP_EXPECT(h->stats.tree_acks >= 1);
        ibmc_mcast_chan_free(&r->ch);
        ibmc_mcast_chan_free(&h->ch);
        free(r);
        free(h);
    }

    TAP_TEST("a late write of an earlier channel on the root's board is asked about without "
             "claiming packets that may be on their way: the member NAKs nothing and "
             "acknowledges") {
        member_t *r = malloc(sizeof(*r)), *m = malloc(sizeof(*m));
        static uint64_t board[IBMC_MCAST_BOARD_WORDS(2)];
        member_init(m, 1);
        memset(r, 0, sizeof(*r));
        r->w.room = 64;
        ibmc_mcast_engine_init(&r->eng, &ops, &r->w, &params, &r->stats, NULL);
        ibmc_mcast_chan_init(&r->ch, &r->eng, 2, 0, 7, P);
        ibmc_mcast_chan_open(&r->ch, 0x1234, 1, board);
        ibmc_mcast_chan_set_ready(&r->ch);
        root_sends_at(r, 0.0, data, 3 * P);
        /* the packets are still on their way when the late word is read */
        ibmc_mcast_bcast_start(&m->ch, out, 3 * P, 0);
        board[1] = ibmc_mcast_board_word(0, 12345);
        int release;
        TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        TAP_EXPECT_EQ(r->stats.acks_foreign, 1);
        TAP_EXPECT(r->w.nrc == 1 && r->w.rc[0].h.kind == IBMC_MCAST_RC_ACK_REQ &&
                   r->w.rc[0].to == 1);
        TAP_EXPECT_EQ(r->w.rc[0].h.a, r->ch.tx.min_acked);
        ibmc_mcast_rc_in(&m->ch, 0, &r->w.rc[0].h, NULL, 0);
        TAP_EXPECT_EQ(naks(m), 0);
        TAP_EXPECT_EQ(m->stats.naks_asked, 0);
        TAP_EXPECT_EQ(rc_kind(m, IBMC_MCAST_RC_ACK), 1);
        for (int i = 0; i < 3; i++)
            ibmc_mcast_mcast_in(&m->ch, r->w.mcast[i].pkt, r->w.mcast[i].len, 0);
        TAP_EXPECT(test_until_done(&m->ch));
        ibmc_mcast_bcast_finish(&m->ch);
        TAP_EXPECT(!memcmp(out, data, 3 * P));
        TAP_EXPECT_EQ(naks(m), 0);
        TAP_EXPECT_EQ(m->stats.duplicates, 0);
        ibmc_mcast_chan_free(&r->ch);
        ibmc_mcast_chan_free(&m->ch);
        free(r);
        free(m);
    }

    TAP_TEST("with clock_every 8, a waiting receiver and a root whose tail waits read the "
             "clock once every 8 idle turns, every turn that moved, and their timers still act") {
        ibmc_mcast_params_t pa = params;
        pa.clock_every = 8;
        member_t *r = malloc(sizeof(*r)), *m = malloc(sizeof(*m));
        member_init(r, 0);
        member_init(m, 1);
        r->eng.params = pa;
        m->eng.params = pa;
        learned(m, 0.5);        /* m NAKs a silent tail on its own timer */
        root_sends_at(r, 0.01, data, 3 * P);
        m->w.t = 0.01;
        ibmc_mcast_bcast_start(&m->ch, out, 3 * P, 0);
        ibmc_mcast_mcast_in(&m->ch, r->w.mcast[0].pkt, r->w.mcast[0].len, 0);
        /* a turn that saw the packet reads the clock; then 7 idle turns do
         * not, and the 8th does */
        int nows = m->w.nows;
        TAP_EXPECT(!test_until_done(&m->ch));
        TAP_EXPECT_EQ(m->w.nows, nows + 1);
        for (int i = 0; i < 7; i++)
            TAP_EXPECT(!test_until_done(&m->ch));
        TAP_EXPECT_EQ(m->w.nows, nows + 1);
        TAP_EXPECT(!test_until_done(&m->ch));
        TAP_EXPECT_EQ(m->w.nows, nows + 2);
        /* the tail is lost: past the timeout, the NAK goes within 8 turns */
        m->w.t = m->ch.cur.quiet_since + 1.5 * m->ch.cur.timeout;
        for (int i = 0; i < 8 && !naks(m); i++)
            TAP_EXPECT(!test_until_done(&m->ch));
        TAP_EXPECT_EQ(naks(m), 1);
        /* the root: its tail waits for ACKs; 8 looks read the clock once,
         * and its question still goes once the wait has passed */
        int release;
        nows = r->w.nows;
        for (int i = 0; i < 8; i++)
            TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
        TAP_EXPECT_EQ(r->w.nows, nows + 1);
        r->w.t = r->ch.probe.since + 1.5 * r->ch.probe.after;
        int asked = 0;
        for (int i = 0; i < 8 && !asked; i++) {
            TAP_EXPECT_EQ(ibmc_mcast_chan_progress(&r->ch, &release), 0);
            asked = r->stats.ack_probes > 0;
        }
        TAP_EXPECT(asked);
        ibmc_mcast_chan_free(&r->ch);
        ibmc_mcast_chan_free(&m->ch);
        free(r);
        free(m);
    }

    TAP_TEST("a new channel, initialised or zeroed, takes nothing and is not ready, failed or "
             "probing; it may still be set up") {
        ibmc_mcast_chan_t z;
        memset(&z, 0, sizeof(z));
        TAP_EXPECT_EQ(z.state, IBMC_MCAST_CHAN_NEW);
        TAP_EXPECT(!ibmc_mcast_chan_is_ready(&z) && !ibmc_mcast_chan_accepts(&z) &&
                   !ibmc_mcast_chan_is_failed(&z) && !ibmc_mcast_chan_is_probing(&z) &&
                   !ibmc_mcast_chan_is_retiring(&z));
        ibmc_mcast_chan_set_probing(&z);
        TAP_EXPECT(ibmc_mcast_chan_is_probing(&z) && ibmc_mcast_chan_accepts(&z) &&
                   !ibmc_mcast_chan_is_ready(&z));
        memset(&z, 0, sizeof(z));
        ibmc_mcast_chan_fail(&z);
        TAP_EXPECT(ibmc_mcast_chan_is_failed(&z) && !ibmc_mcast_chan_accepts(&z));
        memset(&z, 0, sizeof(z));
        ibmc_mcast_chan_set_ready(&z);
        TAP_EXPECT(ibmc_mcast_chan_is_ready(&z) && ibmc_mcast_chan_accepts(&z));

        member_t *r = malloc(sizeof(*r)), *m = malloc(sizeof(*m));
        member_init(r, 0);
        member_open_n(m, 2, 1);
        TAP_EXPECT_EQ(m->ch.state, IBMC_MCAST_CHAN_NEW);
        TAP_EXPECT(!ibmc_mcast_chan_accepts(&m->ch));
        root_sends_at(r, 0.0, data, P);
        ibmc_mcast_mcast_in(&m->ch, r->w.mcast[0].pkt, r->w.mcast[0].len, 0);
        TAP_EXPECT_EQ(m->stats.dropped, 1);
        TAP_EXPECT_EQ(m->ch.rx.count[IBMC_MCAST_RX_HELD], 0);
        TAP_EXPECT_EQ(m->w.nrc, 0);
        ibmc_mcast_chan_free(&r->ch);
        ibmc_mcast_chan_free(&m->ch);
        free(r);
        free(m);
    }

    TAP_TEST("a probing channel takes the probe and its acknowledgement, once, and no data; "
             "set ready, it takes the data") {
        member_t *r = malloc(sizeof(*r)), *m = malloc(sizeof(*m)), *src = malloc(sizeof(*src));
        member_open_n(r, 2, 0);
        member_open_n(m, 2, 1);
        member_init(src, 0);    /* the packets rank 0 will send once the channel is ready */
        ibmc_mcast_chan_set_probing(&r->ch);
        ibmc_mcast_chan_set_probing(&m->ch);
        TAP_EXPECT(ibmc_mcast_chan_is_probing(&r->ch) && ibmc_mcast_chan_is_probing(&m->ch));
        TAP_EXPECT(ibmc_mcast_chan_accepts(&m->ch) && !ibmc_mcast_chan_is_ready(&m->ch));
        TAP_EXPECT(!ibmc_mcast_chan_probe_done(&r->ch) && !ibmc_mcast_chan_probe_done(&m->ch));
        /* the probe reaches rank 1: acknowledged to rank 0, once */
        TAP_EXPECT_EQ(ibmc_mcast_probe_in(&m->ch), 0);
        TAP_EXPECT_EQ(ibmc_mcast_probe_in(&m->ch), 0);
        TAP_EXPECT(m->w.nrc == 1 && m->w.rc[0].h.kind == IBMC_MCAST_RC_PROBE_ACK &&
                   m->w.rc[0].to == 0);
        TAP_EXPECT(ibmc_mcast_chan_probe_done(&m->ch));
        /* rank 0 counts it, once */
        TAP_EXPECT_EQ(ibmc_mcast_rc_in(&r->ch, 1, &m->w.rc[0].h, NULL, 0), 0);
        TAP_EXPECT(ibmc_mcast_chan_probe_done(&r->ch));
        TAP_EXPECT_EQ(ibmc_mcast_rc_in(&r->ch, 1, &m->w.rc[0].h, NULL, 0), 0);
        TAP_EXPECT_EQ(r->ch.probe_acks, 1);
        TAP_EXPECT_EQ(r->stats.dropped, 1);
        /* data while probing: dropped, not held */
        root_sends_at(src, 0.0, data, P);
        ibmc_mcast_mcast_in(&m->ch, src->w.mcast[0].pkt, src->w.mcast[0].len, 0);
        TAP_EXPECT_EQ(m->stats.dropped, 1);
        TAP_EXPECT_EQ(m->ch.rx.count[IBMC_MCAST_RX_HELD], 0);
        /* ready: probing ends, and the packet is delivered */
        ibmc_mcast_chan_set_ready(&r->ch);
        ibmc_mcast_chan_set_ready(&m->ch);
        TAP_EXPECT(ibmc_mcast_chan_is_ready(&r->ch) && ibmc_mcast_chan_is_ready(&m->ch));
        TAP_EXPECT(!ibmc_mcast_chan_is_probing(&m->ch) && ibmc_mcast_chan_accepts(&m->ch));
        ibmc_mcast_bcast_start(&m->ch, out, P, 0);
        ibmc_mcast_mcast_in(&m->ch, src->w.mcast[0].pkt, src->w.mcast[0].len, 0);
        TAP_EXPECT(test_until_done(&m->ch));
        ibmc_mcast_bcast_finish(&m->ch);
        TAP_EXPECT(!memcmp(out, data, P));
        /* a ready channel is not set back to probing, nor failed */
        ibmc_mcast_chan_set_probing(&m->ch);
        TAP_EXPECT(ibmc_mcast_chan_is_ready(&m->ch));
        ibmc_mcast_chan_fail(&m->ch);
        TAP_EXPECT(ibmc_mcast_chan_is_ready(&m->ch) && !ibmc_mcast_chan_is_failed(&m->ch));
        ibmc_mcast_chan_free(&r->ch);
        ibmc_mcast_chan_free(&m->ch);
        ibmc_mcast_chan_free(&src->ch);
        free(r);
        free(m);
        free(src);
    }

    TAP_TEST("a failed channel stays failed: set_probing and set_ready leave it, and it takes "
             "neither packets nor the probe's acknowledgements") {
        member_t *r = malloc(sizeof(*r)), *src = malloc(sizeof(*src));
        member_open_n(r, 2, 0);
        member_init(src, 1);
        /* from NEW */
        ibmc_mcast_chan_fail(&r->ch);
        TAP_EXPECT(ibmc_mcast_chan_is_failed(&r->ch));
        ibmc_mcast_chan_set_probing(&r->ch);
        TAP_EXPECT(ibmc_mcast_chan_is_failed(&r->ch));
        ibmc_mcast_chan_set_ready(&r->ch);
        TAP_EXPECT(ibmc_mcast_chan_is_failed(&r->ch));
        ibmc_mcast_chan_fail(&r->ch);
        TAP_EXPECT(ibmc_mcast_chan_is_failed(&r->ch));
        TAP_EXPECT(!ibmc_mcast_chan_accepts(&r->ch) && !ibmc_mcast_chan_is_ready(&r->ch));
        ibmc_mcast_chan_free(&r->ch);
        /* from PROBING, as the setup's third round fails it */
        member_open_n(r, 2, 0);
        ibmc_mcast_chan_set_probing(&r->ch);
        ibmc_mcast_chan_fail(&r->ch);
        TAP_EXPECT(ibmc_mcast_chan_is_failed(&r->ch) && !ibmc_mcast_chan_is_probing(&r->ch));
        ibmc_mcast_chan_set_ready(&r->ch);
        TAP_EXPECT(ibmc_mcast_chan_is_failed(&r->ch));
        ibmc_mcast_rc_t pa = {.kind = IBMC_MCAST_RC_PROBE_ACK,.context_id = 7,.epoch = 1,.root = -1 };
        ibmc_mcast_rc_in(&r->ch, 1, &pa, NULL, 0);
        TAP_EXPECT_EQ(r->ch.probe_acks, 0);
        TAP_EXPECT(!ibmc_mcast_chan_probe_done(&r->ch));
        root_sends_at(src, 0.0, data, P);
        ibmc_mcast_mcast_in(&r->ch, src->w.mcast[0].pkt, src->w.mcast[0].len, 1);
        TAP_EXPECT_EQ(r->stats.dropped, 2);
        TAP_EXPECT_EQ(r->ch.rx.count[IBMC_MCAST_RX_HELD], 0);
        ibmc_mcast_chan_free(&r->ch);
        ibmc_mcast_chan_free(&src->ch);
        free(r);
        free(src);
    }

    TAP_TEST("a retiring channel stays retiring: fail, set_ready and set_probing leave it, and "
             "it still takes messages") {
        member_t *m = malloc(sizeof(*m));
        member_init(m, 1);
        int release;
        TAP_EXPECT_EQ(ibmc_mcast_chan_retire(&m->ch, &release), 0);
        TAP_EXPECT(ibmc_mcast_chan_is_retiring(&m->ch) && ibmc_mcast_chan_accepts(&m->ch) &&
                   !ibmc_mcast_chan_is_ready(&m->ch));
        ibmc_mcast_chan_fail(&m->ch);
        ibmc_mcast_chan_set_ready(&m->ch);
        ibmc_mcast_chan_set_probing(&m->ch);
        TAP_EXPECT(ibmc_mcast_chan_is_retiring(&m->ch));
        ibmc_mcast_chan_free(&m->ch);
        free(m);
    }

    TAP_TEST("the accessors: the posted root, the window and the NAK timeout") {
        member_t *m = malloc(sizeof(*m));
        member_init(m, 1);
        TAP_EXPECT_EQ(ibmc_mcast_chan_posted_root(&m->ch), -1);
        TAP_EXPECT_EQ(ibmc_mcast_chan_window(&m->ch), params.window);
        TAP_EXPECT(fabs(ibmc_mcast_chan_nak_timeout(&m->ch) - params.nak_timeout_us * 1e-6) <
                   1e-12);
        ibmc_mcast_bcast_start(&m->ch, out, P, 0);
        TAP_EXPECT_EQ(ibmc_mcast_chan_posted_root(&m->ch), 0);
        learned(m, 0.5);
        TAP_EXPECT(fabs(ibmc_mcast_chan_nak_timeout(&m->ch) - 0.5 * params.nak_timeout_us * 1e-6)
                   < 1e-12);
        ibmc_mcast_chan_free(&m->ch);
        free(m);
    }

    return tap_done();
}
