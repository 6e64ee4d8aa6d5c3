/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* MPI_Barrier's arrivals and a small MPI_Allreduce's partial results on a
 * channel's boards: every member tells rank 0 that it, and every member
 * below it, has entered the barrier (or gives it the reduction of their
 * contributions); rank 0 then releases everyone with one multicast packet
 * (the caller's broadcast of one byte, or of the result, ibmc_mcast_bcast).
 *
 * The tree is the complete F-ary tree on the ranks, rooted at rank 0:
 * member m's parent is (m - 1) / F and its children are F*m + 1 .. F*m + F.
 * Its depth is about log_F of the size, so with F = 32 up to 1,057 members
 * report in two steps and up to 33,825 in three, and no parent, rank 0
 * included, ever has more than F children: the root's work per barrier
 * does not grow with the node count.
 *
 * A report is a count, not an event: the number of barriers and small
 * allreduces the member's whole subtree has entered on this channel (MPI
 * orders a communicator's collectives alike at every member, so one count
 * serves both).  A member writes it by RDMA
 * into its own word of its parent's arrival board (the second half of the
 * board of ibmc_mcast_board.h, the same word format, epoch above count):
 * the parent polls at most F words and pays no receive, credit or
 * completion for it (seed 000 §5.5's RDMA-written ACKs; seed 001 §4's
 * RDMA-written arrival flags).  Where no write can go now (the parent has
 * no board, the connection is not up or has sends queued) the count goes
 * as an RC message, IBMC_MCAST_RC_ARRIVE.  Counts only grow, so a parent
 * keeps the larger of what it has heard by either way, and a write that
 * overtakes an RC message, or the reverse, changes nothing.  A word of
 * another epoch is a late write of an earlier channel that used this
 * board; no correct member writes one (a parent reads every arrival before
 * its barrier can end), so it is counted (foreign, dropped) and ignored.
 *
 * An allreduce's report also carries the subtree's partial result, at most
 * IBMC_MCAST_PARTIAL_BYTES: the child writes it by RDMA into its slot of
 * the parent's board (slot k for its parent's k-th child), then its count,
 * on the same connection, so the count lands after the data (seed 001 §4
 * writes data, then a flag, the same way); the parent reads the slot once
 * the count says the child arrived, and combines the children's results
 * into its own contribution in child order.  A slot is written again only
 * in a later allreduce, which the child enters after the root's result
 * reached it, so after the parent has read the slot.  Or the result rides
 * in the RC message.  The operation must be commutative: the children of
 * a parent are not consecutive ranks.
 *
 * An RC report from a member that is not a child of this process under
 * the tree (its fanout is in the message), a count more than one call
 * ahead of this process (no child can be), or a report of the call this
 * process is in with another fanout or length is dropped and counted.
 * The members of a channel hold its boards' keys and could write anywhere
 * in them, so these checks catch stale, foreign and malformed reports,
 * not a member that lies; a job's processes trust each other, as MPI's
 * do.  The data-then-count order rests on the RC QP placing an RDMA
 * write's data before a later write's (no relaxed ordering is asked for
 * on these QPs or their memory).
 *
 * The tree and the counts are pure logic; the engine's part drives them
 * through ibmc_mcast_ops_t (test/unit/test_mcast_arrive.c, on the host).
 * Nothing here is lossy: board writes and RC messages are reliable, so a
 * barrier's only loss is its release, recovered as any broadcast packet. */

#ifndef IBMC_MCAST_ARRIVE_H_INCLUDED
#define IBMC_MCAST_ARRIVE_H_INCLUDED

#include <stdint.h>
#include "ibmc_mcast_engine.h"

/* Member m's parent in the tree of n members, or -1 for rank 0. */
static inline int ibmc_mcast_arrive_parent(int m, int fanout)
{
    return m <= 0 ? -1 : (m - 1) / fanout;
}

/* Member m's children among n members: *first and how many (0..fanout). */
static inline int ibmc_mcast_arrive_children(int m, int n, int fanout, int *first)
{
    int64_t f = (int64_t) fanout * m + 1, last = f + fanout - 1;
    if (last > n - 1)
        last = n - 1;
    *first = (int) (f < n ? f : n);
    return f <= last ? (int) (last - f + 1) : 0;
}

/* This process enters its next barrier on c, with children per parent
 * `fanout` (at least 2, the same at every member for this barrier; counts
 * are cumulative, so barriers and allreduces may use different fanouts). */
void ibmc_mcast_arrive_start(ibmc_mcast_chan_t * c, int fanout);

/* Reads the children's reports and, once they and this process have all
 * arrived, reports to the parent.  *done: at rank 0, every member has
 * arrived; elsewhere, this process's subtree has and its report is sent.
 * Never blocks. */
int ibmc_mcast_arrive_test(ibmc_mcast_chan_t * c, int *done);

/* start, then test until done, waiting with ops->wait between tests. */
int ibmc_mcast_arrive(ibmc_mcast_chan_t * c, int fanout);

/* This process enters a small allreduce on c: like a barrier's arrival, with
 * acc (len bytes, 1 .. IBMC_MCAST_PARTIAL_BYTES, the same at every member)
 * its contribution, into which test combines the children's partial
 * results with combine(ctx, child's, acc, len).  When test says done, acc
 * holds the subtree's result; at rank 0, everyone's.  acc must stay until
 * then.  fanout is at most IBMC_MCAST_PARTIAL_SLOTS. */
void ibmc_mcast_reduce_start(ibmc_mcast_chan_t * c, int fanout, void *acc, size_t len,
                             ibmc_mcast_combine_fn combine, void *ctx);

/* reduce_start, then test until done, waiting with ops->wait. */
int ibmc_mcast_reduce(ibmc_mcast_chan_t * c, int fanout, void *acc, size_t len,
                      ibmc_mcast_combine_fn combine, void *ctx);

/* An IBMC_MCAST_RC_ARRIVE message from member `from` (checked a member by
 * the I/O side): its subtree has entered h->a barriers and allreduces,
 * and body (blen bytes) is its partial result of the last allreduce. */
int ibmc_mcast_arrive_rc_in(ibmc_mcast_chan_t * c, int from, const ibmc_mcast_rc_t * h,
                            const void *body, size_t blen);

#endif /* IBMC_MCAST_ARRIVE_H_INCLUDED */
