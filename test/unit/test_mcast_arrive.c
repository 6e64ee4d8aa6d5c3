/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The barrier's arrival tree and one member's arrival step
 * (ibmc_mcast_arrive.h), driven by hand: what a parent believes, when it
 * reports, and by which way.  test_mcast_sim.c runs whole barriers under
 * loss. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_mcast_engine.h"
#include "ibmc_mcast_arrive.h"
#include "tap.h"

#define P 32

/* an expectation that says what it saw when it fails */
#define CHECK(cond, ...) do { if (!(cond)) tap_diag(__VA_ARGS__); TAP_EXPECT(cond); } while (0)

/* What the member sent: its last write or RC message. */
typedef struct {
    int writes, rcs, data_writes;
    int can_write;
    size_t data_off;
    uint32_t data;              /* the first 4 bytes of the last data write */
    int to, which;
    uint64_t word;
    ibmc_mcast_rc_t h;
} world_t;

static int w_post(void *io, ibmc_mcast_chan_t * c, const void *pkt, size_t len)
{
    (void) io;
    (void) c;
    (void) pkt;
    (void) len;
    return 0;
}

static int w_flush(void *io, ibmc_mcast_chan_t * c)
{
    (void) io;
    (void) c;
    return 0;
}

static int w_room(void *io, ibmc_mcast_chan_t * c)
{
    (void) io;
    (void) c;
    return 64;
}

static int w_send_rc(void *io, ibmc_mcast_chan_t * c, int to, const ibmc_mcast_rc_t * h,
                     const void *pkt, size_t len, uint16_t pkt_flags)
{
    world_t *w = io;
    (void) c;
    (void) pkt;
    (void) len;
    (void) pkt_flags;
    w->rcs++;
    w->to = to;
    w->h = *h;
    return 0;
}

static int w_write_board(void *io, ibmc_mcast_chan_t * c, int to, int which, uint64_t word,
                         int *written)
{
    world_t *w = io;
    (void) c;
    *written = w->can_write;
    if (w->can_write) {
        w->writes++;
        w->to = to;
        w->which = which;
        w->word = word;
    }
    return 0;
}

static int w_write_data(void *io, ibmc_mcast_chan_t * c, int to, size_t offset, const void *data,
                        size_t len, int *written)
{
    world_t *w = io;
    (void) c;
    *written = w->can_write && len >= 4;
    if (*written) {
        w->data_writes++;
        w->to = to;
        w->data_off = offset;
        memcpy(&w->data, data, 4);
    }
    return 0;
}

static double w_now(void *io)
{
    (void) io;
    return 0;
}

static int w_wait(void *io)
{
    (void) io;
    return 0;
}

static void *w_zalloc(void *io, size_t bytes)
{
    (void) io;
    return calloc(1, bytes);
}

static void w_free(void *io, void *p)
{
    (void) io;
    free(p);
}

static const ibmc_mcast_ops_t ops = {
    .post = w_post,.flush = w_flush,.post_room = w_room,.send_rc = w_send_rc,
    .write_board = w_write_board,.write_data = w_write_data,.now = w_now,.wait = w_wait,.poll = w_wait,
    .zalloc = w_zalloc,.free = w_free
};

typedef struct {
    world_t w;
    ibmc_mcast_engine_t eng;
    ibmc_mcast_stats_t stats;
    ibmc_mcast_chan_t ch;
    uint64_t board[IBMC_MCAST_BOARD_WORDS(8)];
} member_t;

static const uint32_t epoch = 5;

static void member_init(member_t * m, int size, int rank, int rdma)
{
    ibmc_mcast_params_t params = {.window = 16,.ack_every = 4,.subgroup = 0,
        .nak_timeout_us = 200,.nak_max_us = 1600,.rdma_acks = rdma
    };
    memset(m, 0, sizeof(*m));
    m->w.can_write = 1;
    ibmc_mcast_engine_init(&m->eng, &ops, &m->w, &params, &m->stats, NULL);
    ibmc_mcast_chan_init(&m->ch, &m->eng, size, rank, 9, P);
    ibmc_mcast_chan_open(&m->ch, 0x77, epoch, m->board);
    ibmc_mcast_chan_set_ready(&m->ch);
}

/* A child's word on m's arrival board, as its RDMA write lands. */
static void land(member_t * m, int child, uint32_t ep, uint32_t count)
{
    m->board[m->ch.size + child] = ibmc_mcast_board_word(ep, count);
}

/* An RC report from member `from` under fanout f, with len bytes of body. */
static void rc_report_body(member_t * m, int from, uint32_t count, int f, const void *body,
                           size_t len)
{
    ibmc_mcast_rc_t h = {.kind = IBMC_MCAST_RC_ARRIVE,.context_id = 9,.epoch = epoch,.a = count,
        .b = (uint32_t) f,.root = -1
    };
    ibmc_mcast_rc_in(&m->ch, from, &h, body, len);
}

static void rc_report(member_t * m, int from, uint32_t count, int f)
{
    rc_report_body(m, from, count, f, NULL, 0);
}

/* A child's partial result in slot k of m's board, as its RDMA write lands. */
static void land_data(member_t * m, int k, uint32_t v)
{
    memcpy((unsigned char *) m->board + IBMC_MCAST_PARTIAL_OFFSET(m->ch.size, k), &v, 4);
}

static void sum_u32(void *ctx, const void *in, void *inout, size_t len)
{
    uint32_t a, b;
    (void) ctx;
    (void) len;
    memcpy(&a, in, 4);
    memcpy(&b, inout, 4);
    b += a;
    memcpy(inout, &b, 4);
}

int main(void)
{
    TAP_TEST("the tree: every member but rank 0 has one parent, which lists it as a child, "
             "and no parent has more than the fanout") {
        static const int sizes[] = { 2, 3, 7, 33, 100, 1024, 1057, 8192 };
        static const int fanouts[] = { 2, 3, 4, 16, 32, 64 };
        for (size_t a = 0; a < sizeof(sizes) / sizeof(*sizes); a++)
            for (size_t b = 0; b < sizeof(fanouts) / sizeof(*fanouts); b++) {
                int n = sizes[a], f = fanouts[b], depth = 0;
                int *seen = calloc(n, sizeof(int));
                for (int m = 0; m < n; m++) {
                    int first, k = ibmc_mcast_arrive_children(m, n, f, &first);
                    CHECK(k >= 0 && k <= f, "n %d f %d: member %d has %d children", n, f,
                              m, k);
                    for (int i = first; i < first + k; i++) {
                        CHECK(ibmc_mcast_arrive_parent(i, f) == m,
                                  "n %d f %d: child %d of %d has parent %d", n, f, i, m,
                                  ibmc_mcast_arrive_parent(i, f));
                        seen[i]++;
                    }
                    int d = 0;
                    for (int x = m; x > 0; x = ibmc_mcast_arrive_parent(x, f))
                        d++;
                    depth = d > depth ? d : depth;
                }
                CHECK(ibmc_mcast_arrive_parent(0, f) == -1 && seen[0] == 0,
                          "rank 0 has a parent");
                for (int m = 1; m < n; m++)
                    CHECK(seen[m] == 1, "n %d f %d: member %d is the child of %d parents",
                              n, f, m, seen[m]);
                if (f == 32 && n <= 1056)
                    CHECK(depth <= 2, "n %d: 32 children a parent take %d steps", n, depth);
                free(seen);
            }
    }

    TAP_TEST("a parent reports once every child's count is in, by a board write, its "
             "subtree's count") {
        /* member 1 of 7 with fanout 2: children 3 and 4, parent 0 */
        member_t *m = malloc(sizeof(*m));
        int done;
        member_init(m, 7, 1, 1);
        ibmc_mcast_arrive_start(&m->ch, 2);
        ibmc_mcast_arrive_test(&m->ch, &done);
        CHECK(!done && m->w.writes == 0 && m->w.rcs == 0, "reported before its children");
        land(m, 3, epoch, 1);
        ibmc_mcast_arrive_test(&m->ch, &done);
        CHECK(!done && m->w.writes == 0, "reported with child 4 missing");
        /* a report of the next barrier counts for this one too */
        rc_report(m, 4, 2, 2);
        ibmc_mcast_arrive_test(&m->ch, &done);
        CHECK(done && m->w.writes == 1 && m->w.to == 0 &&
                  m->w.which == IBMC_MCAST_BOARD_ARRIVALS &&
                  m->w.word == ibmc_mcast_board_word(epoch, 1),
                  "done %d, %d writes to %d (board %d) of %llx", done, m->w.writes, m->w.to,
                  m->w.which, (unsigned long long) m->w.word);
        CHECK(m->stats.arrivals_sent == 1 && m->stats.arrivals_written == 1 &&
                  m->stats.arrivals_read == 1, "counted %llu sent, %llu written, %llu read",
                  m->stats.arrivals_sent, m->stats.arrivals_written, m->stats.arrivals_read);
        ibmc_mcast_arrive_test(&m->ch, &done);
        CHECK(done && m->w.writes == 1, "reported twice");
        /* the second barrier: child 4 already reported it, child 3 not */
        ibmc_mcast_arrive_start(&m->ch, 2);
        ibmc_mcast_arrive_test(&m->ch, &done);
        CHECK(!done, "second barrier done without child 3");
        land(m, 3, epoch, 2);
        m->w.can_write = 0;
        ibmc_mcast_arrive_test(&m->ch, &done);
        CHECK(done && m->w.rcs == 1 && m->w.to == 0 && m->w.h.kind == IBMC_MCAST_RC_ARRIVE &&
                  m->w.h.a == 2 && m->w.h.b == 2 && m->w.h.epoch == epoch,
                  "with no write possible: %d RC messages, kind %d, count %u", m->w.rcs,
                  m->w.h.kind, m->w.h.a);
        ibmc_mcast_chan_free(&m->ch);
        free(m);
    }

    TAP_TEST("rank 0 is done when its children are; it reports to nobody") {
        member_t *m = malloc(sizeof(*m));
        int done;
        member_init(m, 5, 0, 1);
        ibmc_mcast_arrive_start(&m->ch, 4);
        for (int c = 1; c < 4; c++)
            land(m, c, epoch, 1);
        ibmc_mcast_arrive_test(&m->ch, &done);
        CHECK(!done, "done with member 4 missing");
        land(m, 4, epoch, 1);
        ibmc_mcast_arrive_test(&m->ch, &done);
        CHECK(done && m->w.writes == 0 && m->w.rcs == 0 && m->stats.arrivals_sent == 0,
                  "done %d, %d writes, %d RC messages", done, m->w.writes, m->w.rcs);
        ibmc_mcast_chan_free(&m->ch);
        free(m);
    }

    TAP_TEST("a report from a member that is not a child, or a word of another epoch, is "
             "dropped, counted, and believed in nothing") {
        member_t *m = malloc(sizeof(*m));
        int done;
        member_init(m, 7, 1, 1);
        ibmc_mcast_arrive_start(&m->ch, 2);
        rc_report(m, 5, 9, 2);  /* member 5's parent is 2 */
        rc_report(m, 0, 9, 2);  /* its own parent */
        rc_report(m, 7, 9, 2);  /* no member */
        rc_report(m, 3, 9, 1);  /* no fanout below 2 */
        land(m, 3, epoch - 1, 1);       /* a late write of an earlier channel */
        rc_report(m, 4, 1, 2);
        ibmc_mcast_arrive_test(&m->ch, &done);
        CHECK(!done && m->w.writes == 0, "believed a stray report");
        CHECK(m->stats.dropped == 5 && m->stats.foreign == 1,
                  "%llu dropped, %llu foreign", m->stats.dropped, m->stats.foreign);
        land(m, 3, epoch, 1);
        ibmc_mcast_arrive_test(&m->ch, &done);
        CHECK(done && m->w.writes == 1, "the true word not taken");
        ibmc_mcast_chan_free(&m->ch);
        free(m);
    }

    TAP_TEST("with board writes off (MPIR_CVAR_IBMC_MCAST_RDMA_ACKS), every report is an RC "
             "message, and an RC report reaches the engine through ibmc_mcast_rc_in") {
        member_t *m = malloc(sizeof(*m)), *p = malloc(sizeof(*p));
        int done;
        member_init(m, 3, 2, 0);
        member_init(p, 3, 0, 0);
        ibmc_mcast_arrive_start(&m->ch, 2);
        ibmc_mcast_arrive_test(&m->ch, &done);
        CHECK(done && m->w.writes == 0 && m->w.rcs == 1 && m->w.to == 0,
                  "%d writes, %d RC messages to %d", m->w.writes, m->w.rcs, m->w.to);
        ibmc_mcast_arrive_start(&p->ch, 2);
        rc_report(p, 1, 1, 2);
        ibmc_mcast_arrive_test(&p->ch, &done);
        CHECK(!done, "rank 0 done without member 2");
        ibmc_mcast_rc_in(&p->ch, 2, &m->w.h, NULL, 0);
        ibmc_mcast_arrive_test(&p->ch, &done);
        CHECK(done, "rank 0 not done with both reports in");
        ibmc_mcast_chan_free(&m->ch);
        ibmc_mcast_chan_free(&p->ch);
        free(m);
        free(p);
    }
    TAP_TEST("an allreduce's parent combines its children's slots, written or sent, once "
             "their counts say they are in, and reports the sum by a data write, then a count") {
        /* member 1 of 7, fanout 2: children 3 (slot 0) and 4 (slot 1) */
        member_t *m = malloc(sizeof(*m));
        int done;
        uint32_t acc = 100, four = 40;
        member_init(m, 7, 1, 1);
        ibmc_mcast_reduce_start(&m->ch, 2, &acc, 4, sum_u32, NULL);
        land_data(m, 0, 30);
        ibmc_mcast_arrive_test(&m->ch, &done);
        CHECK(!done && acc == 100, "combined before any count was in: %u", acc);
        land(m, 3, epoch, 1);
        rc_report_body(m, 4, 1, 2, &four, 4);
        ibmc_mcast_arrive_test(&m->ch, &done);
        CHECK(done && acc == 170, "done %d, sum %u, not 170", done, acc);
        /* member 1 is its parent 0's first child: slot 0 */
        CHECK(m->w.data_writes == 1 && m->w.data == 170 &&
              m->w.data_off == IBMC_MCAST_PARTIAL_OFFSET(7, 0) && m->w.writes == 1 &&
              m->w.which == IBMC_MCAST_BOARD_ARRIVALS && m->w.to == 0 && m->w.rcs == 0,
              "%d data writes of %u at %zu, %d word writes, %d RC messages", m->w.data_writes,
              m->w.data, m->w.data_off, m->w.writes, m->w.rcs);
        ibmc_mcast_chan_free(&m->ch);
        free(m);
    }

    TAP_TEST("a report of the current call with another fanout or length, or a count more "
             "than one call ahead, is dropped and not believed") {
        member_t *m = malloc(sizeof(*m));
        int done;
        uint32_t acc = 1, v = 5;
        uint64_t big = 7;
        member_init(m, 7, 1, 1);
        ibmc_mcast_reduce_start(&m->ch, 2, &acc, 4, sum_u32, NULL);
        rc_report_body(m, 3, 1, 3, &v, 4);      /* 3 is no child of 1 under fanout 3 */
        rc_report_body(m, 4, 1, 4, &v, 4);      /* 4 is 1's child under fanout 3... not 4 */
        rc_report_body(m, 3, 1, 2, &big, 8);    /* 8 bytes in a 4-byte allreduce */
        rc_report_body(m, 4, 3, 2, &v, 4);      /* two calls ahead */
        land(m, 3, epoch, 3);   /* likewise, on the board */
        ibmc_mcast_arrive_test(&m->ch, &done);
        CHECK(!done && acc == 1, "believed a malformed report: done %d, acc %u", done, acc);
        CHECK(m->stats.dropped == 5, "%llu dropped, not 5", m->stats.dropped);
        rc_report_body(m, 3, 1, 2, &v, 4);
        rc_report_body(m, 4, 1, 2, &v, 4);
        ibmc_mcast_arrive_test(&m->ch, &done);
        CHECK(done && acc == 11, "done %d, acc %u, not 11", done, acc);
        ibmc_mcast_chan_free(&m->ch);
        free(m);
    }
    return tap_done();
}
