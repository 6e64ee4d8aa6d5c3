/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Unit tests of ibmc_credit: the accounting, and a model of two endpoints
 * under random scheduling that checks the two properties the netmod relies
 * on: a receiver never holds more unconsumed packets from one peer than the
 * buffers it reserved for that peer (limit + IBMC_CREDIT_SPARE), and traffic
 * never deadlocks, one-sided or both ways. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_credit.h"
#include "tap.h"
#include "rng.h"

/* One direction's wire: packets in flight, each either data (uses a
 * credit) or a credit-only update, each carrying piggybacked credits. */
#define WIRE_MAX 4096
typedef struct {
    int is_data[WIRE_MAX];
    int credits[WIRE_MAX];
    int head, n;
} wire_t;

typedef struct {
    ibmc_credit_t c;
    int to_send;                /* data packets the application still wants to send */
    int received;               /* data packets delivered */
    int max_unconsumed;         /* most packets ever waiting in this side's buffers */
} endpoint_t;

static void wire_push(wire_t * w, int is_data, int credits)
{
    int i = (w->head + w->n) % WIRE_MAX;
    w->is_data[i] = is_data;
    w->credits[i] = credits;
    w->n++;
}

/* Run the model; returns 0 if everything was delivered within the step
 * budget without overrun or protocol error. */
static int run_model(rng_t * rng, int limit, int a_msgs, int b_msgs, int updates, int *overrun,
                     int *stuck)
{
    endpoint_t ep[2];
    wire_t wire[2];             /* wire[i]: from ep[i] to ep[1 - i] */
    memset(ep, 0, sizeof(ep));
    memset(wire, 0, sizeof(wire));
    ibmc_credit_init(&ep[0].c, limit);
    ibmc_credit_init(&ep[1].c, limit);
    ep[0].to_send = a_msgs;
    ep[1].to_send = b_msgs;
    *overrun = 0;
    *stuck = 0;

    for (long step = 0; step < 2000000; step++) {
        int i = (int) rng_below(rng, 2);
        endpoint_t *me = &ep[i];
        wire_t *out = &wire[i], *in = &wire[1 - i];
        /* packets waiting at ep[i] are those on the wire into it: a "slow"
         * receiver lets them pile up until it decides to poll */
        if (in->n > limit + IBMC_CREDIT_SPARE)
            *overrun = 1;
        switch (rng_below(rng, 3)) {
            case 0:            /* send one data packet if a credit allows */
                if (me->to_send > 0 && ibmc_credit_can_send(&me->c)) {
                    ibmc_credit_consume(&me->c);
                    wire_push(out, 1, ibmc_credit_take(&me->c));
                    me->to_send--;
                }
                break;
            case 1:            /* poll: consume what arrived */
                while (in->n > 0) {
                    int k = in->head;
                    if (ibmc_credit_grant(&me->c, in->credits[k]) < 0)
                        return -1;
                    if (in->is_data[k]) {
                        ibmc_credit_received(&me->c);
                        me->received++;
                    }
                    in->head = (in->head + 1) % WIRE_MAX;
                    in->n--;
                }
                if (updates && ibmc_credit_need_update(&me->c))
                    wire_push(out, 0, ibmc_credit_take(&me->c));
                break;
            default:           /* busy elsewhere */
                break;
        }
        if (ep[1].received == a_msgs && ep[0].received == b_msgs)
            return 0;
    }
    *stuck = 1;
    return 1;
}

int main(void)
{
    rng_t rng;
    rng_seed(&rng, 4242);

    TAP_TEST("init: the full window, threshold half of it (at least 1)") {
        ibmc_credit_t c;
        ibmc_credit_init(&c, 32);
        TAP_EXPECT_EQ(c.avail, 32);
        TAP_EXPECT_EQ(c.owed, 0);
        TAP_EXPECT_EQ(c.threshold, 16);
        ibmc_credit_init(&c, 3);
        TAP_EXPECT_EQ(c.threshold, 2);
        ibmc_credit_init(&c, 1);
        TAP_EXPECT_EQ(c.threshold, 1);
    }

    TAP_TEST("send: the window runs out after limit packets") {
        ibmc_credit_t c;
        ibmc_credit_init(&c, 4);
        for (int i = 0; i < 4; i++) {
            TAP_EXPECT(ibmc_credit_can_send(&c));
            ibmc_credit_consume(&c);
        }
        TAP_EXPECT(!ibmc_credit_can_send(&c));
        TAP_EXPECT(ibmc_credit_grant(&c, 3) == 0);
        TAP_EXPECT_EQ(c.avail, 3);
    }

    TAP_TEST("grant: more credits than were given out is a protocol error") {
        ibmc_credit_t c;
        ibmc_credit_init(&c, 4);
        ibmc_credit_consume(&c);
        TAP_EXPECT(ibmc_credit_grant(&c, 2) == -1);
        TAP_EXPECT_EQ(c.avail, 3);
        TAP_EXPECT(ibmc_credit_grant(&c, -1) == -1);
        TAP_EXPECT(ibmc_credit_grant(&c, 1) == 0);
    }

    TAP_TEST("receive: owed credits, the update trigger, take resets") {
        ibmc_credit_t c;
        ibmc_credit_init(&c, 8);
        for (int i = 0; i < 3; i++)
            ibmc_credit_received(&c);
        TAP_EXPECT(!ibmc_credit_need_update(&c));   /* threshold 4 */
        ibmc_credit_received(&c);
        TAP_EXPECT(ibmc_credit_need_update(&c));
        TAP_EXPECT_EQ(ibmc_credit_take(&c), 4);
        TAP_EXPECT_EQ(ibmc_credit_take(&c), 0);
        TAP_EXPECT(!ibmc_credit_need_update(&c));
    }

    TAP_TEST("take: capped at the 16-bit wire field") {
        ibmc_credit_t c;
        ibmc_credit_init(&c, 100000);
        for (int i = 0; i < 70000; i++)
            ibmc_credit_received(&c);
        TAP_EXPECT_EQ(ibmc_credit_take(&c), IBMC_CREDIT_MAX);
        TAP_EXPECT_EQ(ibmc_credit_take(&c), 70000 - IBMC_CREDIT_MAX);
    }

    TAP_TEST("model: one-sided traffic, no overrun, no deadlock") {
        int limits[] = { 1, 2, 3, 8, 32 };
        for (size_t l = 0; l < sizeof(limits) / sizeof(limits[0]); l++) {
            for (int rep = 0; rep < 20; rep++) {
                int overrun, stuck;
                int rc = run_model(&rng, limits[l], 500, 0, 1, &overrun, &stuck);
                if (rc || overrun) {
                    tap_diag("  limit %d rep %d: rc %d overrun %d stuck %d", limits[l], rep, rc,
                             overrun, stuck);
                    TAP_FAIL("one-sided model");
                }
            }
        }
    }

    TAP_TEST("model: traffic both ways, no overrun, no deadlock") {
        for (int rep = 0; rep < 200; rep++) {
            int limit = 1 + (int) rng_below(&rng, 40);
            int a = (int) rng_below(&rng, 600), b = (int) rng_below(&rng, 600);
            int overrun, stuck;
            int rc = run_model(&rng, limit, a, b, 1, &overrun, &stuck);
            if (rc || overrun) {
                tap_diag("  limit %d a %d b %d: rc %d overrun %d stuck %d", limit, a, b, rc,
                         overrun, stuck);
                TAP_FAIL("two-sided model");
            }
        }
    }

    TAP_TEST("model: without credit packets one-sided traffic stalls (the model can fail)") {
        int overrun, stuck;
        TAP_EXPECT(run_model(&rng, 4, 100, 0, 0, &overrun, &stuck) == 1);
        TAP_EXPECT(stuck == 1);
    }

    return tap_done();
}
