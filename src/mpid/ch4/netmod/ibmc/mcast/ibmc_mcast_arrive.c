/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <string.h>
#include "ibmc_mcast_arrive.h"

#define CALL(expr) do { err = (expr); if (err) return err; } while (0)

/* Member `from`'s subtree has entered `count` barriers and allreduces:
 * keep the larger.  A child is at most one call ahead of its parent (it
 * enters the next only after the current one's release, which needs the
 * parent's report); a count beyond that is no child's, and is dropped.
 * Returns 1 when it was taken. */
static int heard(ibmc_mcast_chan_t * c, int from, uint32_t count)
{
    if (ibmc_mcast_seq_diff(count, c->arr.entered) > 1) {
        c->eng->stats->dropped++;
        return 0;
    }
    if (ibmc_mcast_seq_diff(count, c->arr.heard[from]) > 0)
        c->arr.heard[from] = count;
    return 1;
}

/* Which child of its parent member m is under fanout f (its slot). */
static int child_slot(int m, int fanout)
{
    return m - (fanout * ibmc_mcast_arrive_parent(m, fanout) + 1);
}

static void enter(ibmc_mcast_chan_t * c, int fanout)
{
    c->arr.fanout = fanout < 2 ? 2 : fanout;
    c->arr.entered++;
}

void ibmc_mcast_arrive_start(ibmc_mcast_chan_t * c, int fanout)
{
    enter(c, fanout);
    c->arr.len = 0;
}

void ibmc_mcast_reduce_start(ibmc_mcast_chan_t * c, int fanout, void *acc, size_t len,
                             ibmc_mcast_combine_fn combine, void *ctx)
{
    enter(c, fanout > IBMC_MCAST_PARTIAL_SLOTS ? IBMC_MCAST_PARTIAL_SLOTS : fanout);
    c->arr.acc = acc;
    c->arr.len = len > IBMC_MCAST_PARTIAL_BYTES ? IBMC_MCAST_PARTIAL_BYTES : len;
    c->arr.combine = combine;
    c->arr.combine_ctx = ctx;
}

int ibmc_mcast_arrive_rc_in(ibmc_mcast_chan_t * c, int from, const ibmc_mcast_rc_t * h,
                            const void *body, size_t blen)
{
    /* the sender names its fanout: a child that is already in a barrier
     * may report before this process enters it */
    int fanout = (int) h->b;
    /* a report of the call this process is in must be of its shape */
    int current = h->a == c->arr.entered && c->arr.reported != c->arr.entered;
    if (from <= 0 || from >= c->size || fanout < 2 ||
        ibmc_mcast_arrive_parent(from, fanout) != c->rank || blen > IBMC_MCAST_PARTIAL_BYTES ||
        (blen && child_slot(from, fanout) >= IBMC_MCAST_PARTIAL_SLOTS) ||
        ibmc_mcast_seq_diff(h->a, c->arr.entered) > 1 ||
        (current && (fanout != c->arr.fanout || blen != c->arr.len))) {
        c->eng->stats->dropped++;
        return 0;
    }
    /* the partial result first, then the count that says it is there */
    if (blen)
        memcpy(c->arr.partials + (size_t) child_slot(from, fanout) * IBMC_MCAST_PARTIAL_BYTES,
               body, blen);
    heard(c, from, h->a);
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
    /* a count read now may vouch for a partial result written before it */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

/* This subtree's count, and its partial result, to the parent: board
 * writes when they can go now, else an RC message. */
static int report(ibmc_mcast_chan_t * c, int parent)
{
    const ibmc_mcast_ops_t *ops = c->eng->ops;
    int err, written = 1;
    uint32_t count = c->arr.entered;
    c->arr.reported = count;
    c->eng->stats->arrivals_sent++;
    if (c->eng->params.rdma_acks) {
        if (c->arr.len) {
            size_t off = IBMC_MCAST_PARTIAL_OFFSET(c->size, child_slot(c->rank, c->arr.fanout));
            written = 0;
            if (ops->write_data)
                CALL(ops->write_data(c->eng->io, c, parent, off, c->arr.acc, c->arr.len,
                                     &written));
        }
        if (written)
            CALL(ops->write_board(c->eng->io, c, parent, IBMC_MCAST_BOARD_ARRIVALS,
                                  ibmc_mcast_board_word(c->epoch, count), &written));
        if (written) {
            c->eng->stats->arrivals_written++;
            return 0;
        }
    }
    ibmc_mcast_rc_t h = {.kind = IBMC_MCAST_RC_ARRIVE,.context_id = c->context_id,
        .epoch = c->epoch,.a = count,.b = (uint32_t) c->arr.fanout,.root = -1
    };
    return ops->send_rc(c->eng->io, c, parent, &h, c->arr.len ? c->arr.acc : NULL, c->arr.len,
                        0);
}

int ibmc_mcast_arrive_test(ibmc_mcast_chan_t * c, int *done)
{
    int err, first, n = ibmc_mcast_arrive_children(c->rank, c->size, c->arr.fanout, &first);
    uint32_t want = c->arr.entered;
    *done = c->arr.reported == want;
    if (*done)
        return 0;
    if (c->arr.has_board)
        read_board(c, first, n);
    for (int m = first; m < first + n; m++)
        if (ibmc_mcast_seq_diff(c->arr.heard[m], want) < 0)
            return 0;
    /* every child's result is in its slot: combined in child order */
    for (int i = 0; c->arr.len && i < n; i++)
        c->arr.combine(c->arr.combine_ctx, c->arr.partials + (size_t) i * IBMC_MCAST_PARTIAL_BYTES,
                       c->arr.acc, c->arr.len);
    if (c->rank == 0) {
        /* nobody to report to: done, and the next test combines nothing again */
        c->arr.reported = want;
        *done = 1;
        return 0;
    }
    CALL(report(c, ibmc_mcast_arrive_parent(c->rank, c->arr.fanout)));
    *done = 1;
    return 0;
}

static int run(ibmc_mcast_chan_t * c)
{
    int err, done;
    for (;;) {
        CALL(ibmc_mcast_arrive_test(c, &done));
        if (done)
            return 0;
        CALL(c->eng->ops->wait(c->eng->io));
    }
}

int ibmc_mcast_arrive(ibmc_mcast_chan_t * c, int fanout)
{
    ibmc_mcast_arrive_start(c, fanout);
    return run(c);
}

int ibmc_mcast_reduce(ibmc_mcast_chan_t * c, int fanout, void *acc, size_t len,
                      ibmc_mcast_combine_fn combine, void *ctx)
{
    ibmc_mcast_reduce_start(c, fanout, acc, len, combine, ctx);
    return run(c);
}
