/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include "ibmc_mcast_arrive.h"

#define CALL(expr) do { err = (expr); if (err) return err; } while (0)

/* Member `from`'s subtree has entered `count` barriers: keep the larger. */
static void heard(ibmc_mcast_chan_t * c, int from, uint32_t count)
{
    if (ibmc_mcast_seq_diff(count, c->arr.heard[from]) > 0)
        c->arr.heard[from] = count;
}

static int is_child(const ibmc_mcast_chan_t * c, int m)
{
    return m > 0 && m < c->size && c->arr.fanout >= 2 &&
        ibmc_mcast_arrive_parent(m, c->arr.fanout) == c->rank;
}

void ibmc_mcast_arrive_start(ibmc_mcast_chan_t * c, int fanout)
{
    c->arr.fanout = fanout < 2 ? 2 : fanout;
    c->arr.entered++;
}

int ibmc_mcast_arrive_rc_in(ibmc_mcast_chan_t * c, int from, uint32_t count)
{
    /* the fanout is set at the first barrier; a child that is already in
     * its first one may report before this process enters it */
    int fanout = c->arr.fanout >= 2 ? c->arr.fanout : 0;
    if (from <= 0 || from >= c->size || (fanout && !is_child(c, from))) {
        c->eng->stats->dropped++;
        return 0;
    }
    heard(c, from, count);
    return 0;
}

/* The children's words on this process's arrival board. */
static void read_board(ibmc_mcast_chan_t * c, int first, int n)
{
    for (int m = first; m < first + n; m++) {
        uint32_t count;
        int k = ibmc_mcast_board_take(&c->arr.board, m, &count);
        if (k > 0) {
            c->eng->stats->arrivals_read++;
            heard(c, m, count);
        } else if (k < 0) {
            c->eng->stats->dropped++;
            c->eng->stats->foreign++;
        }
    }
}

/* This subtree's count to the parent: a board write when one can go now,
 * else an RC message. */
static int report(ibmc_mcast_chan_t * c, int parent)
{
    const ibmc_mcast_ops_t *ops = c->eng->ops;
    int err, written = 0;
    uint32_t count = c->arr.entered;
    c->arr.reported = count;
    c->eng->stats->arrivals_sent++;
    if (c->eng->params.rdma_acks) {
        CALL(ops->write_board(c->eng->io, c, parent, IBMC_MCAST_BOARD_ARRIVALS,
                              ibmc_mcast_board_word(c->epoch, count), &written));
        if (written) {
            c->eng->stats->arrivals_written++;
            return 0;
        }
    }
    ibmc_mcast_rc_t h = {.kind = IBMC_MCAST_RC_ARRIVE,.context_id = c->context_id,
        .epoch = c->epoch,.a = count,.root = -1
    };
    return ops->send_rc(c->eng->io, c, parent, &h, NULL, 0, 0);
}

int ibmc_mcast_arrive_test(ibmc_mcast_chan_t * c, int *done)
{
    int err, first, n = ibmc_mcast_arrive_children(c->rank, c->size, c->arr.fanout, &first);
    uint32_t want = c->arr.entered;
    *done = c->rank != 0 && c->arr.reported == want;
    if (*done)
        return 0;
    if (c->arr.has_board)
        read_board(c, first, n);
    for (int m = first; m < first + n; m++)
        if (ibmc_mcast_seq_diff(c->arr.heard[m], want) < 0)
            return 0;
    if (c->rank == 0) {
        *done = 1;
        return 0;
    }
    CALL(report(c, ibmc_mcast_arrive_parent(c->rank, c->arr.fanout)));
    *done = 1;
    return 0;
}

int ibmc_mcast_arrive(ibmc_mcast_chan_t * c, int fanout)
{
    int err, done;
    ibmc_mcast_arrive_start(c, fanout);
    for (;;) {
        CALL(ibmc_mcast_arrive_test(c, &done));
        if (done)
            return 0;
        CALL(c->eng->ops->wait(c->eng->io));
    }
}
