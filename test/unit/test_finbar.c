/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Unit tests of ibmc_finbar, the dissemination barrier MPI_Finalize runs
 * over RC: the schedule's peers, refusal of every message but the one
 * expected per round, and a model of `size` processes that arrive at
 * random times and whose messages are delivered in random order, which
 * checks what finalize relies on: no process leaves before every process
 * has arrived, every process leaves, and each sends exactly one message
 * per round. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_finbar.h"
#include "tap.h"
#include "rng.h"

#define MAXP 80
#define MAXMSG (MAXP * 8)

typedef struct {
    int from, to, round;
} msg_t;

typedef struct {
    int early_leave;            /* a process left while another had not arrived */
    int never_left;             /* a process still inside when nothing was left to do */
    int refused;                /* a model message the barrier refused */
    int extra_sends;            /* more messages than rounds from one process */
} model_result_t;

static model_result_t model(int size, uint64_t seed)
{
    model_result_t r;
    memset(&r, 0, sizeof(r));
    rng_t g;
    rng_seed(&g, seed);
    ibmc_finbar_t b[MAXP];
    int arrived[MAXP] = { 0 }, left[MAXP] = { 0 }, sends[MAXP] = { 0 };
    int n_arrived = 0;
    msg_t wire[MAXMSG];
    int nw = 0;
    for (int p = 0; p < size; p++)
        ibmc_finbar_init(&b[p], p, size);
    for (int step = 0; step < 100000; step++) {
        /* one event: a process arrives, a message is delivered, or a
         * process that has arrived takes a turn of its progress loop */
        int ev = (int) (rng_next(&g) % 3);
        if (ev == 0 && n_arrived < size) {
            int p = (int) (rng_next(&g) % (uint64_t) size);
            if (!arrived[p]) {
                arrived[p] = 1;
                n_arrived++;
            }
        } else if (ev == 1 && nw > 0) {
            int i = (int) (rng_next(&g) % (uint64_t) nw);
            msg_t m = wire[i];
            wire[i] = wire[--nw];
            /* a process not yet arrived keeps what comes early */
            if (ibmc_finbar_heard(&b[m.to], m.from, m.round) != IBMC_FINBAR_OK)
                r.refused++;
        } else {
            int p = (int) (rng_next(&g) % (uint64_t) size);
            if (!arrived[p] || left[p])
                continue;
            int to, round;
            if (ibmc_finbar_due(&b[p], &to, &round)) {
                if (nw == MAXMSG)
                    abort();
                wire[nw++] = (msg_t) {p, to, round};
                ibmc_finbar_sent(&b[p]);
                sends[p]++;
            }
            if (ibmc_finbar_advance(&b[p])) {
                left[p] = 1;
                if (n_arrived < size)
                    r.early_leave++;
            }
        }
        int all_left = 1;
        for (int p = 0; p < size; p++)
            all_left &= left[p];
        if (all_left && nw == 0)
            break;
    }
    for (int p = 0; p < size; p++) {
        r.never_left += !left[p];
        r.extra_sends += sends[p] != b[p].rounds;
    }
    return r;
}

int main(void)
{
    TAP_TEST("rounds: ceil(log2 size), none for one process") {
        ibmc_finbar_t b;
        int want[][2] = { {1, 0}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {8, 3}, {9, 4}, {1024, 10},
        {1025, 11}
        };
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
            ibmc_finbar_init(&b, 0, want[i][0]);
            TAP_EXPECT_EQ(b.rounds, want[i][1]);
        }
        int to, round;
        ibmc_finbar_init(&b, 0, 1);
        TAP_EXPECT(!ibmc_finbar_due(&b, &to, &round));
        TAP_EXPECT(ibmc_finbar_advance(&b));
    }

    TAP_TEST("schedule: rank + 2^k to, rank - 2^k from, wrapping") {
        ibmc_finbar_t b;
        int to, round;
        ibmc_finbar_init(&b, 5, 7);
        TAP_EXPECT_EQ(b.rounds, 3);
        int want_to[] = { 6, 0, 2 }, want_from[] = { 4, 3, 1 };
        for (int k = 0; k < 3; k++) {
            TAP_EXPECT(ibmc_finbar_due(&b, &to, &round));
            TAP_EXPECT_EQ(to, want_to[k]);
            TAP_EXPECT_EQ(round, k);
            ibmc_finbar_sent(&b);
            TAP_EXPECT(!ibmc_finbar_due(&b, &to, &round));
            TAP_EXPECT(!ibmc_finbar_advance(&b));
            TAP_EXPECT_EQ(ibmc_finbar_heard(&b, want_from[k], k), IBMC_FINBAR_OK);
            TAP_EXPECT_EQ(ibmc_finbar_advance(&b), k == 2);
        }
        TAP_EXPECT(!ibmc_finbar_due(&b, &to, &round));
    }

    TAP_TEST("a later round heard early waits for the earlier one") {
        ibmc_finbar_t b;
        int to, round;
        ibmc_finbar_init(&b, 0, 4);
        TAP_EXPECT_EQ(ibmc_finbar_heard(&b, 2, 1), IBMC_FINBAR_OK);     /* 0 - 2 mod 4 */
        TAP_EXPECT(ibmc_finbar_due(&b, &to, &round));
        ibmc_finbar_sent(&b);
        TAP_EXPECT(!ibmc_finbar_advance(&b));
        TAP_EXPECT_EQ(b.round, 0);
        TAP_EXPECT_EQ(ibmc_finbar_heard(&b, 3, 0), IBMC_FINBAR_OK);
        TAP_EXPECT(!ibmc_finbar_advance(&b));   /* round 1's message not sent yet */
        TAP_EXPECT_EQ(b.round, 1);
        TAP_EXPECT(ibmc_finbar_due(&b, &to, &round));
        TAP_EXPECT_EQ(to, 2);
        ibmc_finbar_sent(&b);
        TAP_EXPECT(ibmc_finbar_advance(&b));
    }

    TAP_TEST("refused: a wrong round, a wrong sender, a second message") {
        ibmc_finbar_t b;
        ibmc_finbar_init(&b, 3, 8);
        TAP_EXPECT_EQ(ibmc_finbar_heard(&b, 2, -1), IBMC_FINBAR_ERR_ROUND);
        TAP_EXPECT_EQ(ibmc_finbar_heard(&b, 2, 3), IBMC_FINBAR_ERR_ROUND);
        TAP_EXPECT_EQ(ibmc_finbar_heard(&b, 1, 0), IBMC_FINBAR_ERR_FROM);
        TAP_EXPECT_EQ(ibmc_finbar_heard(&b, 3, 0), IBMC_FINBAR_ERR_FROM);
        TAP_EXPECT_EQ(ibmc_finbar_heard(&b, 2, 0), IBMC_FINBAR_OK);
        TAP_EXPECT_EQ(ibmc_finbar_heard(&b, 2, 0), IBMC_FINBAR_ERR_AGAIN);
        TAP_EXPECT_EQ(ibmc_finbar_heard(&b, 7, 2), IBMC_FINBAR_OK);     /* 3 - 4 mod 8 */
        TAP_EXPECT_EQ(b.heard, 5u);
        TAP_EXPECT(strstr(ibmc_finbar_strerror(IBMC_FINBAR_ERR_FROM), "from a process") != NULL);
    }

    TAP_TEST("model: nobody leaves before all arrive; all leave; one message a round") {
        model_result_t tot;
        memset(&tot, 0, sizeof(tot));
        int runs = 0;
        for (int size = 1; size <= 67; size += (size < 17 ? 1 : 7))
            for (uint64_t seed = 1; seed <= 20; seed++) {
                model_result_t r = model(size, seed * 1000 + (uint64_t) size);
                tot.early_leave += r.early_leave;
                tot.never_left += r.never_left;
                tot.refused += r.refused;
                tot.extra_sends += r.extra_sends;
                runs++;
            }
        TAP_EXPECT_EQ(tot.early_leave, 0);
        TAP_EXPECT_EQ(tot.never_left, 0);
        TAP_EXPECT_EQ(tot.refused, 0);
        TAP_EXPECT_EQ(tot.extra_sends, 0);
        tap_diag("%d runs of 1 to 66 processes", runs);
    }

    return tap_done();
}
