/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Unit tests of ibmc_credit: the accounting, lending and reclaiming, and a
 * model of two endpoints under random scheduling that checks what the netmod
 * relies on: a receiver never holds more unconsumed packets from a peer than
 * the buffers it reserved for that peer (its window + IBMC_CREDIT_SPARE), the
 * pool never promises more buffers than are posted, windows stay between
 * base and max, and traffic never deadlocks, one-sided or both ways. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_credit.h"
#include "tap.h"
#include "rng.h"

/* One direction's wire: packets in flight, each either data (uses a
 * credit, may be flagged starved) or a credit-only update, each carrying
 * piggybacked credits. */
#define WIRE_MAX 8192
typedef struct {
    int is_data[WIRE_MAX];
    int starved[WIRE_MAX];
    int credits[WIRE_MAX];
    int head, n;
    int n_credit;               /* credit-only packets among the n */
} wire_t;

typedef struct {
    ibmc_credit_t c;
    ibmc_credit_pool_t pool;
    int to_send;                /* data packets the application still wants to send */
    int received;               /* data packets delivered */
    int max_window;             /* largest window this side ever gave its peer */
} endpoint_t;

typedef struct {
    int overrun;                /* more unconsumed data packets than the window, or
                                 * more credit packets than the spares */
    int overpromised;           /* pool promised more than it posted */
    int out_of_bounds;          /* a window below base or above max */
    int stuck;                  /* step budget ran out */
    int max_window[2];
    int max_credit_pkts;        /* most credit-only packets ever unconsumed */
} model_result_t;

static void wire_push(wire_t * w, int is_data, int starved, int credits)
{
    int i = (w->head + w->n) % WIRE_MAX;
    w->is_data[i] = is_data;
    w->starved[i] = starved;
    w->credits[i] = credits;
    w->n++;
    w->n_credit += !is_data;
}

/* Run the model; returns 0 if everything was delivered within the step
 * budget with no invariant broken, 1 if stuck, -1 on a protocol error. */
static int run_model(rng_t * rng, int base, int max, long pool_extra, int a_msgs, int b_msgs,
                     int updates, int b_slowness, model_result_t * r)
{
    static endpoint_t ep[2];
    static wire_t wire[2];      /* wire[i]: from ep[i] to ep[1 - i] */
    memset(ep, 0, sizeof(ep));
    memset(wire, 0, sizeof(wire));
    memset(r, 0, sizeof(*r));
    for (int i = 0; i < 2; i++) {
        ibmc_credit_init(&ep[i].c, base, max);
        ep[i].pool.posted = base + IBMC_CREDIT_SPARE + pool_extra;
        ibmc_credit_pool_connect(&ep[i].pool, &ep[i].c);
        ep[i].max_window = base;
    }
    ep[0].to_send = a_msgs;
    ep[1].to_send = b_msgs;

    for (long step = 0; step < 4000000; step++) {
        int i = (int) rng_below(rng, 2);
        endpoint_t *me = &ep[i];
        wire_t *out = &wire[i], *in = &wire[1 - i];
        /* packets waiting at ep[i] are those on the wire into it: a "slow"
         * receiver lets them pile up until it decides to poll */
        if (in->n - in->n_credit > me->c.window || in->n_credit > IBMC_CREDIT_SPARE)
            r->overrun = 1;
        if (in->n_credit > r->max_credit_pkts)
            r->max_credit_pkts = in->n_credit;
        if (me->pool.promised > me->pool.posted)
            r->overpromised = 1;
        if (me->c.window < base || me->c.window > max)
            r->out_of_bounds = 1;
        /* a slow endpoint B is "busy elsewhere" on most of its turns */
        switch (rng_below(rng, 3 + (i == 1 ? b_slowness : 0))) {
            case 0:            /* send one data packet if a credit allows */
                if (me->to_send > 0 && ibmc_credit_can_send(&me->c)) {
                    ibmc_credit_consume(&me->c);
                    int s = ibmc_credit_take_starved(&me->c);
                    wire_push(out, 1, s, ibmc_credit_take(&me->c));
                    me->to_send--;
                } else if (me->to_send > 0) {
                    ibmc_credit_mark_starved(&me->c);
                }
                break;
            case 1:            /* poll: consume some of what arrived (a
                                 * completion queue yields packets in
                                 * batches), one packet at a time as
                                 * MPIDI_IBMC_credit_return does */
                for (int batch = in->n ? 1 + (int) rng_below(rng, in->n) : 0; batch > 0;
                     batch--) {
                    int k = in->head;
                    if (ibmc_credit_grant(&me->c, in->credits[k]) < 0)
                        return -1;
                    if (!in->is_data[k])
                        in->n_credit--;
                    in->head = (in->head + 1) % WIRE_MAX;
                    in->n--;
                    if (!in->is_data[k])
                        continue;
                    ibmc_credit_received(&me->c, &me->pool, in->starved[k]);
                    me->received++;
                    if (me->c.window > me->max_window)
                        me->max_window = me->c.window;
                    if (updates && ibmc_credit_need_update(&me->c))
                        wire_push(out, 0, 0, ibmc_credit_take(&me->c));
                }
                break;
            default:           /* busy elsewhere */
                break;
        }
        if (ep[1].received == a_msgs && ep[0].received == b_msgs) {
            r->max_window[0] = ep[0].max_window;
            r->max_window[1] = ep[1].max_window;
            return 0;
        }
    }
    r->stuck = 1;
    return 1;
}

/* Many senders streaming to one receiver whose connections share one pool:
 * lends, partial lends and reclaims between peers.  Same invariants, per
 * connection, plus the pool's.  Returns as run_model does; `lends` counts
 * the receiver's lends. */
#define FAN_MAX 24
static int run_fan_in(rng_t * rng, int n, int base, int max, long pool_extra, int msgs,
                      int r_slowness, model_result_t * r, long *lends)
{
    static ibmc_credit_t snd[FAN_MAX], rcv[FAN_MAX];
    static wire_t data[FAN_MAX], cred[FAN_MAX];
    static int to_send[FAN_MAX];
    ibmc_credit_pool_t pool = { .posted = n * (base + IBMC_CREDIT_SPARE) + pool_extra };
    long received = 0;
    memset(r, 0, sizeof(*r));
    memset(data, 0, sizeof(data));
    memset(cred, 0, sizeof(cred));
    for (int k = 0; k < n; k++) {
        ibmc_credit_init(&snd[k], base, max);
        ibmc_credit_init(&rcv[k], base, max);
        ibmc_credit_pool_connect(&pool, &rcv[k]);
        to_send[k] = msgs;
    }
    for (long step = 0; step < 8000000; step++) {
        for (int k = 0; k < n; k++) {
            if (data[k].n > rcv[k].window || cred[k].n > IBMC_CREDIT_SPARE)
                r->overrun = 1;
            if (rcv[k].window < base || rcv[k].window > max)
                r->out_of_bounds = 1;
            if (rcv[k].window > r->max_window[1])
                r->max_window[1] = rcv[k].window;
        }
        if (pool.promised > pool.posted)
            r->overpromised = 1;
        int actor = (int) rng_below(rng, (uint64_t) (n + 1 + r_slowness));
        if (actor < n) {        /* a sender sends, or takes the credits that arrived */
            int k = actor;
            if (rng_below(rng, 2) == 0) {
                if (to_send[k] > 0 && ibmc_credit_can_send(&snd[k])) {
                    ibmc_credit_consume(&snd[k]);
                    wire_push(&data[k], 1, ibmc_credit_take_starved(&snd[k]), 0);
                    to_send[k]--;
                } else if (to_send[k] > 0) {
                    ibmc_credit_mark_starved(&snd[k]);
                }
            } else {
                while (cred[k].n > 0) {
                    if (ibmc_credit_grant(&snd[k], cred[k].credits[cred[k].head]) < 0)
                        return -1;
                    cred[k].head = (cred[k].head + 1) % WIRE_MAX;
                    cred[k].n--;
                    cred[k].n_credit--;
                }
            }
        } else if (actor == n) {        /* the receiver polls a batch from one peer */
            int k = (int) rng_below(rng, (uint64_t) n);
            for (int batch = data[k].n ? 1 + (int) rng_below(rng, data[k].n) : 0; batch > 0;
                 batch--) {
                uint64_t before = rcv[k].lends;
                ibmc_credit_received(&rcv[k], &pool, data[k].starved[data[k].head]);
                *lends += (long) (rcv[k].lends - before);
                data[k].head = (data[k].head + 1) % WIRE_MAX;
                data[k].n--;
                received++;
                if (ibmc_credit_need_update(&rcv[k]))
                    wire_push(&cred[k], 0, 0, ibmc_credit_take(&rcv[k]));
            }
        }
        if (received == (long) n * msgs)
            return 0;
    }
    r->stuck = 1;
    return 1;
}

static int model_ok(int rc, const model_result_t * r)
{
    return rc == 0 && !r->overrun && !r->overpromised && !r->out_of_bounds;
}

int main(void)
{
    rng_t rng;
    rng_seed(&rng, 4242);

    TAP_TEST("init: base credits, window at base, nothing owed") {
        ibmc_credit_t c;
        ibmc_credit_init(&c, 32, 128);
        TAP_EXPECT_EQ(c.avail, 32);
        TAP_EXPECT_EQ(c.window, 32);
        TAP_EXPECT_EQ(c.owed, 0);
        TAP_EXPECT(!ibmc_credit_need_update(&c));
        ibmc_credit_pool_t p = { .posted = 100 };
        ibmc_credit_pool_connect(&p, &c);
        TAP_EXPECT_EQ(p.promised, 32 + IBMC_CREDIT_SPARE);
    }

    TAP_TEST("send: the window runs out after base packets") {
        ibmc_credit_t c;
        ibmc_credit_init(&c, 4, 4);
        for (int i = 0; i < 4; i++) {
            TAP_EXPECT(ibmc_credit_can_send(&c));
            ibmc_credit_consume(&c);
        }
        TAP_EXPECT(!ibmc_credit_can_send(&c));
        TAP_EXPECT(ibmc_credit_grant(&c, 3) == 0);
        TAP_EXPECT_EQ(c.avail, 3);
    }

    TAP_TEST("grant: more credits than any window is a protocol error") {
        ibmc_credit_t c;
        ibmc_credit_init(&c, 4, 8);
        ibmc_credit_consume(&c);
        TAP_EXPECT(ibmc_credit_grant(&c, 5) == 0);      /* a lend: 8 */
        TAP_EXPECT(ibmc_credit_grant(&c, 1) == -1);
        TAP_EXPECT_EQ(c.avail, 8);
        TAP_EXPECT(ibmc_credit_grant(&c, -1) == -1);
    }

    TAP_TEST("receive: owed credits, the update at half the window, take resets") {
        ibmc_credit_t c;
        ibmc_credit_pool_t p = { .posted = 100 };
        ibmc_credit_init(&c, 8, 8);
        ibmc_credit_pool_connect(&p, &c);
        for (int i = 0; i < 3; i++)
            ibmc_credit_received(&c, &p, 0);
        TAP_EXPECT(!ibmc_credit_need_update(&c));
        ibmc_credit_received(&c, &p, 0);
        TAP_EXPECT(ibmc_credit_need_update(&c));
        TAP_EXPECT_EQ(ibmc_credit_take(&c), 4);
        TAP_EXPECT_EQ(ibmc_credit_take(&c), 0);
        TAP_EXPECT(!ibmc_credit_need_update(&c));
        ibmc_credit_t one;
        ibmc_credit_init(&one, 1, 1);
        ibmc_credit_received(&one, &p, 0);
        TAP_EXPECT(ibmc_credit_need_update(&one));
    }

    TAP_TEST("take: capped at the 16-bit wire field") {
        ibmc_credit_t c;
        ibmc_credit_pool_t p = { .posted = 1000000 };
        ibmc_credit_init(&c, 100000, 100000);
        for (int i = 0; i < 70000; i++)
            ibmc_credit_received(&c, &p, 0);
        TAP_EXPECT_EQ(ibmc_credit_take(&c), IBMC_CREDIT_MAX);
        TAP_EXPECT_EQ(ibmc_credit_take(&c), 70000 - IBMC_CREDIT_MAX);
    }

    TAP_TEST("lend: a starved packet grows the window by base, owed at once, up to max") {
        ibmc_credit_t c;
        ibmc_credit_pool_t p = { .posted = 256 };
        ibmc_credit_init(&c, 16, 40);
        ibmc_credit_pool_connect(&p, &c);
        ibmc_credit_received(&c, &p, 0);
        TAP_EXPECT_EQ(c.window, 16);    /* not starved: no lend */
        ibmc_credit_received(&c, &p, 1);
        TAP_EXPECT_EQ(c.window, 32);
        TAP_EXPECT_EQ(c.owed, 2 + 16);
        TAP_EXPECT_EQ(p.promised, 18 + 16);
        for (int i = 0; i < 32; i++)
            ibmc_credit_received(&c, &p, 0);
        ibmc_credit_received(&c, &p, 1);
        TAP_EXPECT_EQ(c.window, 40);    /* the last step only up to max */
        TAP_EXPECT_EQ(c.owed, 35 + 16 + 8);
        for (int i = 0; i < 40; i++)
            ibmc_credit_received(&c, &p, 0);
        ibmc_credit_received(&c, &p, 1);
        TAP_EXPECT_EQ(c.window, 40);
        TAP_EXPECT_EQ(c.lends, 2);
        TAP_EXPECT_EQ(p.promised, 18 + 24);
    }

    TAP_TEST("lend: one at a time, the next after a window's worth of packets") {
        ibmc_credit_t c;
        ibmc_credit_pool_t p = { .posted = 1000 };
        ibmc_credit_init(&c, 4, 64);
        ibmc_credit_pool_connect(&p, &c);
        ibmc_credit_received(&c, &p, 1);
        TAP_EXPECT_EQ(c.window, 8);
        /* starved packets sent before the lent credits arrived */
        for (int i = 0; i < 7; i++)
            ibmc_credit_received(&c, &p, 1);
        TAP_EXPECT_EQ(c.window, 8);
        TAP_EXPECT_EQ(c.lends, 1);
        ibmc_credit_received(&c, &p, 1);        /* the 8th: the lend reached the peer */
        TAP_EXPECT_EQ(c.window, 12);
        TAP_EXPECT_EQ(c.lends, 2);
    }

    TAP_TEST("lend: a pool short of a step lends what it has; an empty one reclaims") {
        ibmc_credit_t c;
        ibmc_credit_pool_t p = { .posted = 18 + 5 };
        ibmc_credit_init(&c, 16, 64);
        ibmc_credit_pool_connect(&p, &c);
        ibmc_credit_received(&c, &p, 1);
        TAP_EXPECT_EQ(c.window, 21);
        TAP_EXPECT_EQ(p.promised, p.posted);
        TAP_EXPECT_EQ(p.reclaim, 0);
        ibmc_credit_t d;
        ibmc_credit_init(&d, 16, 64);
        p.posted += 18;         /* d's chunk: its base and spares, nothing more */
        ibmc_credit_pool_connect(&p, &d);
        ibmc_credit_received(&d, &p, 1);
        TAP_EXPECT_EQ(d.window, 16);
        TAP_EXPECT_EQ(p.reclaim, 1);
    }

    TAP_TEST("reclaim: a starved peer above base keeps its window") {
        ibmc_credit_t c;
        ibmc_credit_pool_t p = { .posted = 18 + 16 };
        ibmc_credit_init(&c, 16, 64);
        ibmc_credit_pool_connect(&p, &c);
        ibmc_credit_received(&c, &p, 1);
        TAP_EXPECT_EQ(c.window, 32);
        for (int i = 0; i < 32; i++)
            ibmc_credit_received(&c, &p, 0);
        ibmc_credit_received(&c, &p, 1);        /* pool empty, but c is above base */
        TAP_EXPECT_EQ(p.reclaim, 0);
        for (int i = 0; i < 10; i++)
            ibmc_credit_received(&c, &p, 1);
        TAP_EXPECT_EQ(c.window, 32);
    }

    TAP_TEST("reclaim: lent windows shrink to base as packets arrive, then the starved peer grows") {
        ibmc_credit_t a, b;
        ibmc_credit_pool_t p = { .posted = 2 * 18 + 16 };       /* room for one lend */
        ibmc_credit_init(&a, 16, 64);
        ibmc_credit_init(&b, 16, 64);
        ibmc_credit_pool_connect(&p, &a);
        ibmc_credit_pool_connect(&p, &b);
        ibmc_credit_received(&a, &p, 1);
        TAP_EXPECT_EQ(a.window, 32);
        ibmc_credit_take(&a);
        ibmc_credit_received(&b, &p, 1);        /* nothing left to lend */
        TAP_EXPECT_EQ(b.window, 16);
        TAP_EXPECT_EQ(p.reclaim, 1);
        for (int i = 0; i < 16; i++)
            ibmc_credit_received(&a, &p, 0);
        TAP_EXPECT_EQ(a.window, 16);
        TAP_EXPECT_EQ(a.owed, 0);       /* those 16 credits were kept */
        TAP_EXPECT_EQ(p.promised, 2 * 18);
        ibmc_credit_received(&a, &p, 0);        /* at base: credited again */
        TAP_EXPECT_EQ(a.owed, 1);
        ibmc_credit_received(&b, &p, 1);
        TAP_EXPECT_EQ(b.window, 32);
        TAP_EXPECT_EQ(p.reclaim, 0);
        TAP_EXPECT(p.promised <= p.posted);
    }

    TAP_TEST("model: one-sided traffic, no overrun, no deadlock, fixed windows") {
        int limits[] = { 1, 2, 3, 8, 32 };
        for (size_t l = 0; l < sizeof(limits) / sizeof(limits[0]); l++) {
            for (int rep = 0; rep < 20; rep++) {
                model_result_t r;
                int rc = run_model(&rng, limits[l], limits[l], 0, 500, 0, 1, 0, &r);
                if (!model_ok(rc, &r)) {
                    tap_diag("  base %d rep %d: rc %d overrun %d stuck %d", limits[l], rep, rc,
                             r.overrun, r.stuck);
                    TAP_FAIL("one-sided model");
                }
            }
        }
    }

    TAP_TEST("model: streaming to a slow receiver grows the window to max when the pool allows") {
        for (int rep = 0; rep < 20; rep++) {
            model_result_t r;
            int rc = run_model(&rng, 16, 64, 200, 3000, 0, 1, 30, &r);
            if (!model_ok(rc, &r) || r.max_window[1] != 64) {
                tap_diag("  rep %d: rc %d overrun %d overpromised %d bounds %d window %d", rep,
                         rc, r.overrun, r.overpromised, r.out_of_bounds, r.max_window[1]);
                TAP_FAIL("growing one-sided model");
            }
        }
    }

    TAP_TEST("model: a pool with no spare buffers keeps the window at base") {
        model_result_t r;
        int rc = run_model(&rng, 16, 64, 0, 2000, 0, 1, 30, &r);
        TAP_EXPECT(model_ok(rc, &r));
        TAP_EXPECT_EQ(r.max_window[1], 16);
    }

    TAP_TEST("model: traffic both ways with growth, no overrun, no overpromise, no deadlock") {
        for (int rep = 0; rep < 300; rep++) {
            int base = 1 + (int) rng_below(&rng, 40);
            int max = base + (int) rng_below(&rng, 4 * base + 1);
            long extra = (long) rng_below(&rng, 300);
            int a = (int) rng_below(&rng, 1500), b = (int) rng_below(&rng, 1500);
            model_result_t r;
            int rc = run_model(&rng, base, max, extra, a, b, 1, (int) rng_below(&rng, 20), &r);
            if (!model_ok(rc, &r)) {
                tap_diag("  base %d max %d extra %ld a %d b %d: rc %d overrun %d overpromised "
                         "%d bounds %d stuck %d", base, max, extra, a, b, rc, r.overrun,
                         r.overpromised, r.out_of_bounds, r.stuck);
                TAP_FAIL("two-sided model");
            }
        }
    }

    TAP_TEST("model: many peers share one pool, lending and reclaiming, no overrun") {
        long total_lends = 0;
        for (int rep = 0; rep < 200; rep++) {
            int n = 2 + (int) rng_below(&rng, FAN_MAX - 1);
            int base = 1 + (int) rng_below(&rng, 20);
            int max = base + (int) rng_below(&rng, 4 * base + 1);
            long extra = (long) rng_below(&rng, 8 * (uint64_t) base + 1);
            model_result_t r;
            long lends = 0;
            int rc = run_fan_in(&rng, n, base, max, extra, 200, (int) rng_below(&rng, 3 * n),
                                &r, &lends);
            total_lends += lends;
            if (!model_ok(rc, &r)) {
                tap_diag("  n %d base %d max %d extra %ld: rc %d overrun %d overpromised %d "
                         "bounds %d stuck %d", n, base, max, extra, rc, r.overrun,
                         r.overpromised, r.out_of_bounds, r.stuck);
                TAP_FAIL("fan-in model");
            }
        }
        TAP_EXPECT(total_lends > 0);
    }

    TAP_TEST("model: 16 peers and a pool spare smaller than base still lend") {
        model_result_t r;
        long lends = 0;
        int rc = run_fan_in(&rng, 16, 16, 64, 4, 500, 40, &r, &lends);
        TAP_EXPECT(model_ok(rc, &r));
        TAP_EXPECT(lends > 0);
        TAP_EXPECT(r.max_window[1] > 16);
    }

    TAP_TEST("model: without credit packets one-sided traffic stalls (the model can fail)") {
        model_result_t r;
        TAP_EXPECT(run_model(&rng, 4, 4, 0, 100, 0, 0, 0, &r) == 1);
        TAP_EXPECT(r.stuck == 1);
    }

    return tap_done();
}
