/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <math.h>
#include <string.h>
#include "ibmc_mcast_engine.h"
#include "ibmc_mcast_arrive.h"

#define NAK_RANGES 8

#define CALL(expr) do { err = (expr); if (err) return err; } while (0)

static double dmin(double a, double b)
{
    return a < b ? a : b;
}

static double dmax(double a, double b)
{
    return a > b ? a : b;
}

static double nak_max(const ibmc_mcast_chan_t * c)
{
    return c->eng->params.nak_max_us * 1e-6;
}

static double now(const ibmc_mcast_chan_t * c)
{
    return c->eng->ops->now(c->eng->io);
}

/* Whether a turn in which nothing moved reads the clock (params.clock_every).
 * The timers it serves run for hundreds of microseconds, and a turn that
 * does not yield takes about one: reading the clock on every such turn
 * costs a system call each where the clock source is not the TSC (a guest
 * on HPET), for a precision nobody needs. */
static int clock_due(const ibmc_mcast_chan_t * c, uint32_t * idle)
{
    if (++*idle < c->eng->params.clock_every)
        return 0;
    *idle = 0;
    return 1;
}

void ibmc_mcast_engine_init(ibmc_mcast_engine_t * eng, const ibmc_mcast_ops_t * ops, void *io,
                            const ibmc_mcast_params_t * params, ibmc_mcast_stats_t * stats,
                            ibmc_mcast_faults_t * faults)
{
    eng->ops = ops;
    eng->io = io;
    eng->params = *params;
    eng->stats = stats;
    eng->faults = faults;
}

/* A subgroup of 0 is M/2 (at least 1).  A root streaming broadcasts hears
 * from each of its s - 1 leaves about twice every M packets (its turn,
 * §4.4's delayed ACKs, and the answer to the root's request every window/4
 * packets) and from its 2 child co-roots: s = M/2 keeps that near one
 * message per packet it posts.  Simulated (bench/sim/project-rate.sh,
 * doc/results.md), the rate is bound by that load: from 64 to 1,024
 * nodes, subgroups of 8 gave 2.1-2.3 million 1 B broadcasts/s and
 * subgroups of 32 (seed 000 §7.2's model, whose relay term this tree of
 * co-roots without relays does not pay) 1.0 million, with the same latency
 * and loss recovery.  No M (ACKs only when asked) leaves no ACK load to
 * share: no co-roots. */
int ibmc_mcast_subgroup_size(const ibmc_mcast_params_t * params, int size)
{
    int s = params->subgroup, m = (int) params->ack_every;
    if (s == 0)
        s = m ? (m >= 2 ? m / 2 : 1) : size;
    return s < size ? s : size;
}

/* ---- a channel's memory ---- */

static void *take(ibmc_mcast_chan_t * c, size_t n, size_t each, int *nomem)
{
    size_t bytes = n * each;
    void *p = c->eng->ops->zalloc(c->eng->io, bytes ? bytes : 1);
    *nomem |= !p;
    return p;
}

int ibmc_mcast_chan_init(ibmc_mcast_chan_t * c, ibmc_mcast_engine_t * eng, int size, int rank,
                         uint32_t context_id, uint32_t payload_max)
{
    uint32_t w = eng->params.window;
    size_t slot = sizeof(ibmc_mcast_hdr_t) + payload_max;
    int nomem = 0;
    memset(c, 0, sizeof(*c));
    c->eng = eng;
    c->state = IBMC_MCAST_CHAN_NEW;
    c->size = size;
    c->rank = rank;
    c->context_id = context_id;
    c->relay_root = -1;
    c->payload_max = payload_max;
    c->roots = take(c, size, 1, &nomem);
    c->probe_acked = take(c, size, 1, &nomem);
    c->laggards = take(c, size, sizeof(int), &nomem);
    c->acked = take(c, size, sizeof(uint32_t), &nomem);
    c->slots = take(c, w, sizeof(*c->slots), &nomem);
    c->slot_mem = take(c, w, payload_max, &nomem);
    c->ring_bytes = (size_t) w * slot;
    c->ring = take(c, w, slot, &nomem);
    c->board_seen = take(c, size, sizeof(uint64_t), &nomem);
    c->said = take(c, size, sizeof(uint32_t), &nomem);
    c->arr.heard = take(c, size, sizeof(uint32_t), &nomem);
    c->arr.seen = take(c, size, sizeof(uint64_t), &nomem);
    c->arr.partials_local = take(c, IBMC_MCAST_PARTIAL_SLOTS, IBMC_MCAST_PARTIAL_BYTES, &nomem);
    c->arr.partials = c->arr.partials_local;
    c->subgroup = ibmc_mcast_subgroup_size(&eng->params, size);
    if (c->subgroup < size) {
        c->ackers = take(c, size, 1, &nomem);
        c->kids = take(c, size, sizeof(int), &nomem);
        c->relay_ring = take(c, w, slot, &nomem);
        c->relay_ring_root = take(c, w, sizeof(int), &nomem);
        c->leaf_acked = take(c, size, sizeof(uint32_t), &nomem);
        c->child_slots = ibmc_mcast_plan_child_slots(size, c->subgroup);
        c->child_acked = take(c, (size_t) size * c->child_slots, sizeof(uint32_t), &nomem);
        c->agg_sent = take(c, size, sizeof(uint32_t), &nomem);
        c->owed = take(c, size, 1, &nomem);
        c->headed = take(c, size, 1, &nomem);
        c->relay_due = take(c, w, sizeof(*c->relay_due), &nomem);
    }
    return nomem ? -1 : 0;
}

void ibmc_mcast_chan_free(ibmc_mcast_chan_t * c)
{
    void *all[] = { c->roots, c->probe_acked, c->laggards, c->acked, c->slots, c->slot_mem,
        c->ring, c->board_seen, c->said, c->ackers, c->kids, c->relay_ring, c->relay_ring_root,
        c->leaf_acked, c->child_acked, c->agg_sent, c->owed, c->headed, c->relay_due,
        c->arr.heard, c->arr.seen, c->arr.partials_local
    };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (all[i])
            c->eng->ops->free(c->eng->io, all[i]);
    memset(c, 0, sizeof(*c));
}

/* ---- co-roots' plan (ibmc_mcast_coroot.h) ---- */

static ibmc_mcast_plan_t plan_of(const ibmc_mcast_chan_t * c, int root)
{
    return ibmc_mcast_plan(c->size, c->subgroup, root);
}

static int is_coroot(const ibmc_mcast_chan_t * c, int root)
{
    ibmc_mcast_plan_t p = plan_of(c, root);
    return c->relay_ring && root >= 0 && ibmc_mcast_plan_is_coroot(&p, c->rank);
}

/* Where this member's NAKs and ACKs for root's messages go: its head if
 * it is a leaf, its parent in the relay tree if it is a co-root. */
static int ack_target(const ibmc_mcast_chan_t * c, int root)
{
    ibmc_mcast_plan_t p = plan_of(c, root);
    return ibmc_mcast_plan_ack_to(&p, c->rank);
}

void ibmc_mcast_chan_open(ibmc_mcast_chan_t * c, uint64_t job_key, uint32_t epoch,
                          uint64_t * board_words)
{
    const ibmc_mcast_params_t *pa = &c->eng->params;
    ibmc_mcast_id_t id = {.job_key = job_key,.context_id = c->context_id,.epoch = epoch };
    uint32_t payload_max = c->payload_max;
    c->epoch = epoch;
    /* cleared before any member learns where it is; a late write of an
     * earlier channel can still come, and is foreign */
    if (board_words) {
        ibmc_mcast_board_init(&c->board, board_words, c->board_seen, c->size, epoch);
        c->has_board = 1;
        ibmc_mcast_board_init(&c->arr.board, board_words + c->size, c->arr.seen, c->size,
                              epoch);
        c->arr.has_board = 1;
        c->arr.partials = (unsigned char *) board_words + IBMC_MCAST_PARTIAL_OFFSET(c->size, 0);
    }
    ibmc_mcast_rx_init(&c->rx, id, payload_max, pa->window, pa->ack_every, (uint32_t) c->rank,
                       c->slots, c->slot_mem);
    ibmc_mcast_tx_init(&c->tx, id, payload_max, pa->window, c->size, c->rank, c->acked, c->ring);
    if (c->relay_ring) {
        ibmc_mcast_plan_t mine_as_root = plan_of(c, c->rank);
        for (int m = 0; m < c->size; m++)
            c->ackers[m] = ibmc_mcast_plan_ack_to(&mine_as_root, m) == c->rank;
        ibmc_mcast_tx_set_ackers(&c->tx, c->ackers);
        ibmc_mcast_relay_init(&c->relay, c->size, c->rank, pa->window, payload_max,
                              c->relay_ring, c->relay_ring_root, c->leaf_acked, c->child_acked,
                              c->child_slots, c->agg_sent, c->owed);
    }
    c->nak_timeout = pa->nak_timeout_us * 1e-6;
}

/* ---- the set-up's transitions (ibmc_mcast_engine.h says which) ---- */

void ibmc_mcast_chan_set_probing(ibmc_mcast_chan_t * c)
{
    if (c->state == IBMC_MCAST_CHAN_NEW)
        c->state = IBMC_MCAST_CHAN_PROBING;
}

void ibmc_mcast_chan_set_ready(ibmc_mcast_chan_t * c)
{
    if (c->state == IBMC_MCAST_CHAN_NEW || c->state == IBMC_MCAST_CHAN_PROBING)
        c->state = IBMC_MCAST_CHAN_READY;
}

void ibmc_mcast_chan_fail(ibmc_mcast_chan_t * c)
{
    if (c->state == IBMC_MCAST_CHAN_NEW || c->state == IBMC_MCAST_CHAN_PROBING)
        c->state = IBMC_MCAST_CHAN_FAILED;
}

int ibmc_mcast_chan_probe_done(const ibmc_mcast_chan_t * c)
{
    return c->rank == 0 ? c->probe_acks == c->size - 1 : c->probe_seen;
}

/* ---- what goes out ---- */

static int send_rc(ibmc_mcast_chan_t * c, int to, int kind, uint32_t a, uint32_t b, int root,
                   int flags, const void *pkt, size_t len, uint16_t pkt_flags)
{
    ibmc_mcast_rc_t h = {.kind = (uint8_t) kind,.flags = (uint8_t) flags,
        .context_id = c->context_id,.epoch = c->epoch,.a = a,.b = b,.root = root
    };
    return c->eng->ops->send_rc(c->eng->io, c, to, &h, pkt, len, pkt_flags);
}

/* Positions [first, first + count) of root's message are missing here;
 * gap: a later packet of that root has come, so they were sent. */
static int send_nak(ibmc_mcast_chan_t * c, int root, uint32_t first, uint32_t count, int gap)
{
    c->eng->stats->naks_sent++;
    return send_rc(c, ack_target(c, root), IBMC_MCAST_RC_NAK, first, count, root,
                   gap ? IBMC_MCAST_RC_F_GAP : 0, NULL, 0, 0);
}

/* A packet of root's message sent again over RC, in answer to a NAK: the
 * copy is marked as a retransmission, the kept packet stays as sent. */
static int send_again(ibmc_mcast_chan_t * c, int to, int root, const void *pkt, size_t len)
{
    c->eng->stats->retransmits++;
    return send_rc(c, to, IBMC_MCAST_RC_DATA, 0, 0, root, 0, pkt, len, IBMC_MCAST_F_RETRANSMIT);
}

/* Ask member `to` for its ACK: for root's messages (its subtree's, if it
 * is a co-root of them), or, with root -1, for the asker's own. */
static int send_ack_req(ibmc_mcast_chan_t * c, int to, uint32_t pos, int root)
{
    return send_rc(c, to, IBMC_MCAST_RC_ACK_REQ, pos, 0, root, 0, NULL, 0, 0);
}

/* An ACK of pos to member `to`: an RDMA write of this member's word on
 * `to`'s board when the I/O side can post one now (seed 000 §5.5), else an
 * RC message.  An ACK that says what the last one to `to` said is not sent
 * again, except as the answer to an ACK_REQ (`asked`): the asker may have
 * seen a late write of an earlier channel cover this member's word
 * (read_board).  Not resending also means that a member's final ACK at
 * retirement is not written a second time after the root has seen it and
 * let its board go to another channel. */
static int send_ack(ibmc_mcast_chan_t * c, int to, uint32_t pos, int asked)
{
    const ibmc_mcast_ops_t *ops = c->eng->ops;
    int err, written = 0;
    if (!asked && c->said[to] == pos)
        return 0;
    c->said[to] = pos;
    c->eng->stats->acks_sent++;
    if (c->eng->params.rdma_acks) {
        CALL(ops->write_board(c->eng->io, c, to, IBMC_MCAST_BOARD_ACKS,
                              ibmc_mcast_board_word(c->epoch, pos), &written));
        if (written) {
            c->eng->stats->acks_written++;
            /* the testing knob: a late write of the previous epoch over it */
            if (c->state == IBMC_MCAST_CHAN_READY && c->eng->faults &&
                ibmc_mcast_faults_late_ack(c->eng->faults))
                CALL(ops->write_board(c->eng->io, c, to, IBMC_MCAST_BOARD_ACKS,
                                      ibmc_mcast_board_word(c->epoch - 1, pos), &written));
            return 0;
        }
    }
    return send_rc(c, to, IBMC_MCAST_RC_ACK, pos, 0, -1, 0, NULL, 0, 0);
}

/* ---- co-roots: relaying and aggregated ACKs ---- */

/* Pass a packet of root's message on to the co-roots below this head. */
static int relay_on(ibmc_mcast_chan_t * c, int root, const void *pkt, size_t len)
{
    int err;
    ibmc_mcast_plan_t p = plan_of(c, root);
    int k = ibmc_mcast_plan_children(&p, c->rank, c->kids, c->size);
    for (int i = 0; i < k; i++) {
        CALL(send_rc(c, c->kids[i], IBMC_MCAST_RC_RELAY, 0, 0, root, 0, pkt, len, 0));
        c->eng->stats->relays++;
    }
    return 0;
}

/* The relays deliver() left for this turn.  Every entry point of the
 * engine that brings packets or progress starts here (a broadcast's test
 * when it is not done), so at most the packets of one call wait, and the
 * relay ring cannot have reused their slots. */
static int relay_due_flush(ibmc_mcast_chan_t * c)
{
    int err;
    for (uint32_t i = 0; i < c->relay_due_n; i++) {
        const ibmc_mcast_relay_due_t *d = &c->relay_due[i];
        CALL(relay_on(c, d->root, d->pkt, d->len));
    }
    c->relay_due_n = 0;
    return 0;
}

/* This co-root's aggregated ACK for root's messages, to its parent, if one
 * is due (ibmc_mcast_relay_due).  With ask_laggards (the parent asked,
 * ACK_REQ) the leaves and child co-roots that hold the aggregate back are
 * asked in turn, passing on `end`, where the root said it had sent to: a
 * leaf that lost a whole message learns of it so, and a dead member is
 * named by its failed RC connection rather than stalling the root. */
static int coroot_report(ibmc_mcast_chan_t * c, int root, int ask_laggards, uint32_t end)
{
    int err, nlag = 0;
    if (!is_coroot(c, root))
        return 0;
    ibmc_mcast_plan_t p = plan_of(c, root);
    int to = ibmc_mcast_plan_ack_to(&p, c->rank);
    uint32_t agg = ibmc_mcast_relay_aggregate(&c->relay, &p, c->rx.next, c->rx.released,
                                              c->laggards, c->size, &nlag);
    /* asked, it goes even if it did not move: the root may have lost the
     * last one to a late write on its board (read_board) */
    if (ask_laggards ||
        ibmc_mcast_relay_due(&c->relay, root, agg, c->rx.next, c->eng->params.ack_every)) {
        /* said[] records only what send_ack sent */
        int fresh = ask_laggards || to != root || c->said[to] != agg;
        if (to == root) {
            CALL(send_ack(c, root, agg, ask_laggards));
        } else {
            /* to a parent co-root: the message names the root
             * (ibmc_mcast_coroot.h) */
            c->eng->stats->acks_sent++;
            CALL(send_rc(c, to, IBMC_MCAST_RC_ACK, agg, 0, root, 0, NULL, 0, 0));
        }
        ibmc_mcast_relay_sent(&c->relay, root, agg, c->rx.next);
        if (fresh) {
            c->eng->stats->coroot_acks++;
            c->eng->stats->tree_acks += to != root;
        }
    }
    for (int i = 0; ask_laggards && i < nlag; i++) {
        CALL(send_ack_req(c, c->laggards[i], end, root));
        c->eng->stats->ack_probes++;
    }
    return 0;
}

/* After a leaf's ACK: the aggregates of the roots this co-root is serving
 * now, the posted message's and the one it relays for; a retiring channel
 * reports to every root it was a co-root of. */
static int coroot_leaf_moved(ibmc_mcast_chan_t * c)
{
    int err;
    if (c->state == IBMC_MCAST_CHAN_RETIRING) {
        for (int r = 0; r < c->size; r++)
            if (c->headed[r])
                CALL(coroot_report(c, r, 0, 0));
        return 0;
    }
    CALL(coroot_report(c, c->rx.ack_root, 0, 0));
    if (c->relay_root != c->rx.ack_root)
        CALL(coroot_report(c, c->relay_root, 0, 0));
    return 0;
}

/* Every leaf this co-root served has delivered all this process has: the
 * retiring channel no longer needs its relay ring. */
static int coroot_settled(const ibmc_mcast_chan_t * c)
{
    if (!c->relay_ring)
        return 1;
    for (int r = 0; r < c->size; r++) {
        ibmc_mcast_plan_t p = plan_of(c, r);
        if (c->headed[r] &&
            ibmc_mcast_relay_aggregate(&c->relay, &p, c->rx.next, c->rx.released, NULL, 0,
                                       NULL) != c->rx.next)
            return 0;
    }
    return 1;
}

/* ---- what comes in ---- */

/* After a packet reached the protocol: NAK new gaps, acknowledge if due. */
static int after_packet(ibmc_mcast_chan_t * c)
{
    int err;
    ibmc_mcast_range_t r[NAK_RANGES];
    /* a co-root that gets every packet by relay sees a gap as a relay on
     * its way; one that gets only losses by RC asks its parent, which
     * answers from its copy or once it has one */
    if (c->rx.posted && (c->eng->params.relay_on_loss || !is_coroot(c, c->rx.root))) {
        int n = ibmc_mcast_rx_missing(&c->rx, 0, r, NAK_RANGES);
        for (int i = 0; i < n; i++)
            CALL(send_nak(c, c->rx.root, r[i].first, r[i].count, 1));
        /* the answer takes a round trip: the NAK timeout starts again */
        if (n) {
            c->nak_sent_at = now(c);
            if (!c->nak_first_at)
                c->nak_first_at = c->nak_sent_at;
        }
    }
    if (ibmc_mcast_rx_ack_due(&c->rx) && c->rx.ack_root >= 0 && c->rx.ack_root != c->rank) {
        int root = c->rx.ack_root;
        uint32_t pos = ibmc_mcast_rx_ack_take(&c->rx);
        if (is_coroot(c, root)) {
            /* a co-root's ACK speaks for its leaves: it goes as they catch up */
            c->relay.owed[root] = 1;
            CALL(coroot_report(c, root, 0, 0));
        } else {
            CALL(send_ack(c, ack_target(c, root), pos, 0));
        }
    }
    return 0;
}

/* The posted message stops being received in place: the I/O side takes
 * back the receives still posted, so that no device write into the buffer
 * follows, and from now on the receive window copies. */
static int place_end(ibmc_mcast_chan_t * c, int count)
{
    c->rx.armed = 0;
    /* every receive took its fragment: none was left to take back */
    c->eng->stats->place_ended += count && c->rx.in_place - c->place_from < c->rx.nfrags;
    return c->eng->ops->place_disarm(c->eng->io, c, c->place);
}

/* A packet of src's message, by multicast or (via_rc) in answer to a NAK,
 * its header and payload apart (the payload may already be at its place:
 * ibmc_mcast_placed_in); a co-root keeps a copy of each new one and relays
 * it on. */
static int deliver_at(ibmc_mcast_chan_t * c, const void *hdr, const void *payload, size_t plen,
                      int src, int via_rc)
{
    int err;
    /* an RC copy is written by the receive window: no work request may
     * still write its place */
    if (via_rc && c->rx.armed)
        CALL(place_end(c, 1));
    uint64_t copies = c->rx.copies, in_place = c->rx.in_place;
    ibmc_mcast_rx_verdict_t v = ibmc_mcast_rx_packet_at(&c->rx, hdr, payload, plen, src);
    c->eng->stats->copies += c->rx.copies - copies;
    c->eng->stats->in_place += c->rx.in_place - in_place;
    /* a co-root is never armed (ops_turn): what it keeps is one piece */
    const void *pkt = hdr;
    size_t len = sizeof(ibmc_mcast_hdr_t) + plen;
    if ((v == IBMC_MCAST_RX_DELIVERED || v == IBMC_MCAST_RX_HELD) && is_coroot(c, src) &&
        payload == (const char *) hdr + sizeof(ibmc_mcast_hdr_t)) {
        const void *kept = ibmc_mcast_relay_keep(&c->relay, pkt, len, src);
        c->eng->stats->copies++;
        ibmc_mcast_hdr_t h;
        memcpy(&h, kept, sizeof(h));
        c->headed[src] = 1;
        c->relay_root = src;
        /* relayed at the next turn: a co-root receives by multicast like
         * everyone, and its relays only matter to co-roots below it that
         * lose the packet, so the sends need not delay its own broadcast.
         * With relay_on_loss nothing is relayed: the co-roots below ask for
         * what they lose, and in a fabric that loses nothing, no RC copy
         * goes (seed 000 §4.3 pays one per packet per co-root, and counts
         * the duplicates it makes among its costs). */
        if (!c->eng->params.relay_on_loss) {
            if (c->relay_due_n == c->eng->params.window)
                CALL(relay_due_flush(c));
            ibmc_mcast_relay_due_t *due = &c->relay_due[c->relay_due_n++];
            due->pkt = kept;
            due->len = len;
            due->root = src;
        }
        /* leaves that asked for it before it came */
        int n = ibmc_mcast_relay_waiters(&c->relay, src, h.seq, via_rc, c->kids, c->size);
        for (int i = 0; i < n; i++)
            CALL(send_again(c, c->kids[i], src, kept, len));
    }
    if (!via_rc && v == IBMC_MCAST_RX_DELIVERED && c->nak_watch) {
        /* multicast brought a packet of the posted message after a timeout
         * NAK asked for everything missing: the NAK was premature (the root
         * had not sent it yet, or was descheduled).  The silence it ended
         * lasted until now, so the channel's timeout becomes twice that (at
         * least double the timeout that ran out): one premature NAK is
         * enough to learn a late root's lateness, where doubling alone
         * needs one per octave. */
        c->nak_watch = 0;
        c->eng->stats->naks_premature++;
        c->nak_timeout = dmin(2 * (now(c) - c->nak_quiet_from), nak_max(c));
    }
    if (via_rc && c->nak_sent_at > 0) {
        /* The NAK timeout learns from its answers.  Each one times a round
         * trip (from the last NAK: close enough), and the timeout stays above
         * two of them, however low the configured start: a lost tail is
         * found in a few round trips once losses have shown the fabric's
         * (seed 002 §III.D's timer, learned instead of fixed); a
         * retransmission that finds the packet already there
         * came from a NAK sent too early (multicast was merely slow: the
         * I/O side takes multicast packets before RC messages, so a copy
         * that came first is seen first), and doubles it; one that fills a
         * gap was needed, and lets it shrink. */
        double sample = now(c) - c->nak_sent_at;
        c->srtt = c->srtt > 0 ? 0.875 * c->srtt + 0.125 * sample : sample;
        double floor = dmax(2 * c->srtt, 1e-6);
        if (v == IBMC_MCAST_RX_DUPLICATE)
            c->nak_timeout = dmin(2 * c->nak_timeout, nak_max(c));
        else if (v == IBMC_MCAST_RX_DELIVERED)
            c->nak_timeout = dmax(floor, 0.75 * c->nak_timeout);
    }
    switch (v) {
        case IBMC_MCAST_RX_DELIVERED:
        case IBMC_MCAST_RX_HELD:
            break;
        case IBMC_MCAST_RX_SHADOWED:   /* its in-place twin comes, or a NAK asks again */
            c->eng->stats->shadowed++;
            break;
        case IBMC_MCAST_RX_DUPLICATE:
            c->eng->stats->duplicates++;
            break;
        case IBMC_MCAST_RX_MISMATCH:
            c->mismatch = 1;
            break;
        case IBMC_MCAST_RX_FOREIGN:
            c->eng->stats->foreign++;
            c->eng->stats->dropped++;
            break;
        default:
            c->eng->stats->dropped++;
            break;
    }
    return after_packet(c);
}

static int deliver(ibmc_mcast_chan_t * c, const void *pkt, size_t len, int src, int via_rc)
{
    if (len < sizeof(ibmc_mcast_hdr_t)) {
        ibmc_mcast_rx_packet(&c->rx, pkt, len, src);    /* counted malformed */
        c->eng->stats->dropped++;
        return 0;
    }
    return deliver_at(c, pkt, (const char *) pkt + sizeof(ibmc_mcast_hdr_t),
                      len - sizeof(ibmc_mcast_hdr_t), src, via_rc);
}

static int place_arm(ibmc_mcast_chan_t * c, void *place, int rearm);

/* Rearms a broadcast's in-place receive at most this often: a stray
 * packet in its first receive (a root's question about the message
 * before, which every receiver of the group gets) would otherwise put
 * every fragment one place off. */
#define PLACE_REARMS_MAX 4

int ibmc_mcast_placed_in(ibmc_mcast_chan_t * c, uint32_t j, const void *hdr, const void *payload,
                         size_t plen, int src, int *placed)
{
    ibmc_mcast_hdr_t h;
    ibmc_mcast_rx_t *rx = &c->rx;
    int err = 0;
    *placed = 0;
    if (c->state != IBMC_MCAST_CHAN_READY || !rx->armed)
        return 0;
    memcpy(&h, hdr, sizeof(h));
    /* Judged here, before the window sees it, so that what is not a
     * fragment of the posted message is counted once, by its twin on the
     * main queue. */
    uint32_t f = h.seq - rx->first;
    uint64_t want = f + 1 < rx->nfrags ? rx->payload_max
        : rx->len - (uint64_t) f * rx->payload_max;
    int fragment = h.magic == IBMC_MCAST_MAGIC && h.version == IBMC_MCAST_VERSION &&
        h.type == IBMC_MCAST_DATA && h.job_key == rx->id.job_key &&
        h.context_id == rx->id.context_id && h.epoch == rx->id.epoch && src == rx->root &&
        f < rx->nfrags && h.frag == f && h.msg_len == rx->len && h.payload_len == plen &&
        plen == want;
    int last = j + 1 == rx->nfrags;
    if (!fragment) {
        /* Another packet of the group took the j-th receive.  Before any
         * fragment came: start the receives over.  After: the fragments
         * behind it land one receive late and are moved below. */
        c->eng->stats->place_strays++;
        if (rx->got == 0 && c->place_rearms < PLACE_REARMS_MAX) {
            void *place = c->place;
            c->place_rearms++;
            CALL(place_end(c, 0));
            return place_arm(c, place, 1);
        }
        return last ? place_end(c, 1) : 0;
    }
    /* Fragment f's place belongs to a receive still posted (one was lost
     * before it): the device may yet write it, so the receives are taken
     * back first, and it is moved there once none is left. */
    if (f > j)
        CALL(place_end(c, 1));
    unsigned char *at = rx->buf + (size_t) f * rx->payload_max;
    int moved = payload != at;
    if (moved) {
        /* behind a stray or a loss, at a place no receive writes any more */
        if (!ibmc_mcast_rx_awaits(rx, h.seq))
            return last && rx->armed ? place_end(c, 1) : 0;     /* a duplicate: its twin
                                                                 * is judged */
        memmove(at, payload, plen);
        c->eng->stats->place_moved++;
    }
    uint64_t got = rx->got;
    err = deliver_at(c, hdr, at, plen, src, 0);
    *placed = rx->got != got;
    if (moved && *placed) {
        /* a copy, though the window found it at its place */
        rx->in_place--;
        rx->copies++;
        c->eng->stats->in_place--;
        c->eng->stats->copies++;
    }
    if (!err && rx->armed && (last || (!*placed && !moved)))
        err = place_end(c, 1);
    return err;
}

int ibmc_mcast_place_end(ibmc_mcast_chan_t * c)
{
    return c->rx.armed ? place_end(c, 1) : 0;
}

static int ask_in(ibmc_mcast_chan_t * c, const void *pkt, size_t len, int src);

int ibmc_mcast_mcast_in(ibmc_mcast_chan_t * c, const void *pkt, size_t len, int src)
{
    int err;
    ibmc_mcast_hdr_t h;
    CALL(relay_due_flush(c));
    if (c->state != IBMC_MCAST_CHAN_READY) {
        c->eng->stats->dropped++;
        return 0;
    }
    if (len >= sizeof(h)) {
        memcpy(&h, pkt, sizeof(h));
        if (h.type == IBMC_MCAST_ASK)
            return ask_in(c, pkt, len, src);
    }
    return deliver(c, pkt, len, src, 0);
}

int ibmc_mcast_probe_in(ibmc_mcast_chan_t * c)
{
    if (c->probe_seen)
        return 0;
    c->probe_seen = 1;
    return send_rc(c, 0, IBMC_MCAST_RC_PROBE_ACK, 0, 0, -1, 0, NULL, 0, 0);
}

/* Member `from` says it has delivered every position below pos, by RC
 * message without a root or on this process's board: to this process as a
 * root, from a member of its subgroup or a child co-root; and as a co-root,
 * from a leaf (the same position serves both: ACKs count the communicator's
 * stream).  A writer's ACKs to one process that come this way are always of
 * one kind, its own position or its subtree's under this process's
 * messages: a co-root of this process's messages is never in this
 * process's subgroup for another root, because every plan counts subgroups
 * from its root, and a child co-root under another root names that root
 * (child_ack_in; ibmc_mcast_coroot.h). */
static int ack_in(ibmc_mcast_chan_t * c, int from, uint32_t pos)
{
    if (!c->ackers || c->ackers[from])
        ibmc_mcast_tx_ack(&c->tx, from, pos);
    if (c->relay_ring && ibmc_mcast_relay_leaf_ack(&c->relay, from, pos) > 0)
        return coroot_leaf_moved(c);
    return 0;
}

/* Child co-root `from` says its subtree under root has delivered every
 * position below pos. */
static int child_ack_in(ibmc_mcast_chan_t * c, int from, int root, uint32_t pos)
{
    if (root >= c->size || !is_coroot(c, root)) {
        c->eng->stats->dropped++;
        return 0;
    }
    ibmc_mcast_plan_t p = plan_of(c, root);
    int moved = ibmc_mcast_relay_child_ack(&c->relay, &p, from, pos);
    if (moved < 0)
        c->eng->stats->dropped++;
    return moved > 0 ? coroot_report(c, root, 0, 0) : 0;
}

/* A NAK from member `from`: answered from this process's ring if the
 * message was its own, else from what it kept as a co-root. */
static int nak_in(ibmc_mcast_chan_t * c, int from, const ibmc_mcast_rc_t * h)
{
    int err;
    if (h->root < 0 || h->root >= c->size) {
        c->eng->stats->dropped++;
        return 0;
    }
    uint32_t count = h->b < c->tx.window ? h->b : c->tx.window;
    uint64_t stale = c->tx.stale_naks;
    for (uint32_t i = 0; i < count; i++) {
        const void *pkt;
        size_t len;
        if (h->root == c->rank) {
            if (!ibmc_mcast_tx_lookup(&c->tx, h->a + i, &pkt, &len))
                continue;
        } else if (!c->relay_ring) {
            continue;
        } else if (!ibmc_mcast_relay_lookup(&c->relay, h->a + i, h->root, &pkt, &len)) {
            /* not here yet: a gap's packet was sent, so it is on its way by
             * relay (or by the answer to this co-root's own NAK); a
             * timed-out leaf may be asking for one its root has not sent,
             * which multicast will bring.  Without relays, a co-root and its
             * leaf that lost the same tail packet each time out: the leaf's
             * NAK is kept until the co-root's own NAK is answered, so the
             * leaf does not wait for a second, doubled timeout. */
            if (h->flags & IBMC_MCAST_RC_F_GAP)
                ibmc_mcast_relay_wait(&c->relay, from, h->root, h->a + i, 0);
            else if (c->eng->params.relay_on_loss)
                ibmc_mcast_relay_wait(&c->relay, from, h->root, h->a + i, 1);
            continue;
        }
        CALL(send_again(c, from, h->root, pkt, len));
    }
    if (c->tx.stale_naks != stale && !c->probe.learned) {
        /* A NAK for packets every member has acknowledged since: the member
         * asked while they were on their way, and its ACK for them overtook
         * the NAK here.  Such a NAK answers a question (or a timer) that came
         * too soon for this fabric and its scheduling (on an oversubscribed
         * node, members are descheduled for longer than the timeout), so the
         * channel's timeout, which also times this root's questions
         * (probe_laggards), doubles, as a receiver's does for a
         * retransmission it already had.  Once per question: one early
         * question draws a NAK from each member it reached. */
        c->probe.learned = 1;
        c->nak_timeout = dmin(2 * c->nak_timeout, nak_max(c));
    }
    return 0;
}

/* An ACK request from `from` about root's messages says that the root has
 * sent every position below end.  Believed only from the root of the
 * message this member waits for, or from the co-root it acknowledges that
 * root to: then what is missing of the message below end is lost, and is
 * asked for now.  This is how a member that lost every packet of a message,
 * which it cannot tell from a message not yet sent, learns of the loss
 * when it does not NAK on its own for that case (waits_for_root): the
 * root's (or co-root's) question about its unacknowledged packets covers
 * it. */
static int root_sent_below(ibmc_mcast_chan_t * c, int from, int root, uint32_t end, int *nak_n)
{
    int err;
    ibmc_mcast_range_t r[NAK_RANGES];
    *nak_n = 0;
    if (c->state != IBMC_MCAST_CHAN_READY || !c->rx.posted || c->rx.root != root ||
        (from != root && ack_target(c, root) != from))
        return 0;
    ibmc_mcast_rx_sent_below(&c->rx, end);
    /* a co-root that gets every packet by relay has them on their way */
    if (!c->eng->params.relay_on_loss && is_coroot(c, root))
        return 0;
    int n = ibmc_mcast_rx_missing_below(&c->rx, end, r, NAK_RANGES);
    for (int i = 0; i < n; i++)
        CALL(send_nak(c, root, r[i].first, r[i].count, 1));
    *nak_n = n;
    if (n) {
        c->eng->stats->naks_asked += (unsigned) n;
        c->nak_sent_at = now(c);
        if (!c->nak_first_at)
            c->nak_first_at = c->nak_sent_at;
    }
    return 0;
}

/* A root's question to the whole group (IBMC_MCAST_ASK): it has sent every
 * position below end.  Every member hears it, so nobody passes it on.
 *   - A member in that root's broadcast NAKs what it lost below end
 *     (root_sent_below), and acknowledges once the answers complete the
 *     message (ibmc_mcast_rx_want_ack).
 *   - Asked for ACKs too (IBMC_MCAST_F_ACK_REQ), a member that lost nothing
 *     brings its ACK up to date where the root's plan sends it (the root,
 *     or its co-root), if that one has not heard its position yet; a
 *     co-root owes its aggregate, which goes up once its leaves, which
 *     heard the question too, have answered (ibmc_mcast_relay_due).
 *     Without the flag they stay silent: the root wants the losses, and
 *     the skewed ACKs of a stream bring the rest.
 * A member the question missed is asked again (probe_laggards). */
static int ask_in(ibmc_mcast_chan_t * c, const void *pkt, size_t len, int src)
{
    int err, nak_n, want_acks;
    uint32_t end;
    ibmc_mcast_rx_verdict_t v = ibmc_mcast_rx_ask(&c->rx, pkt, len, src, &end, &want_acks);
    if (v != IBMC_MCAST_RX_DELIVERED || src >= c->size || src == c->rank) {
        c->eng->stats->foreign += v == IBMC_MCAST_RX_FOREIGN;
        c->eng->stats->dropped++;
        return 0;
    }
    CALL(root_sent_below(c, src, src, end, &nak_n));
    if (!want_acks)
        return 0;
    if (is_coroot(c, src)) {
        c->relay.owed[src] = 1;
        return coroot_report(c, src, 0, end);
    }
    if (nak_n)
        return 0;
    return send_ack(c, ack_target(c, src), c->rx.next, 0);
}

int ibmc_mcast_rc_in(ibmc_mcast_chan_t * c, int from, const ibmc_mcast_rc_t * h,
                     const void *body, size_t blen)
{
    int err;
    CALL(relay_due_flush(c));
    int live = c->state == IBMC_MCAST_CHAN_READY || c->state == IBMC_MCAST_CHAN_RETIRING;
    switch (h->kind) {
        case IBMC_MCAST_RC_ACK:
            if (h->root >= 0 && live)
                return child_ack_in(c, from, h->root, h->a);
            if (h->root >= 0)
                break;
            return ack_in(c, from, h->a);
        case IBMC_MCAST_RC_NAK:
            return nak_in(c, from, h);
        case IBMC_MCAST_RC_ACK_REQ:{
            /* an ACK states how far this member has delivered, which is true
             * whoever asks; the asker is a member (checked by the caller).  A
             * co-root answers its parent for its whole subtree under the
             * root named (a root asks without naming itself).  A retiring
             * member answers too: its last ACK may have been covered on the
             * asker's board.  The request carries where the root had sent
             * to, and what this member lost below it is asked for first. */
                int root = h->root >= 0 ? h->root : from, nak_n;
                if (root >= c->size)
                    break;
                CALL(root_sent_below(c, from, root, h->a, &nak_n));
                if (live && is_coroot(c, root) && ack_target(c, root) == from) {
                    c->relay.owed[root] = 1;
                    return coroot_report(c, root, 1, h->a);
                }
                if (live)
                    /* not taken from the skewed schedule: the asker need not be
                     * where this member's next due ACK goes */
                    return send_ack(c, from, c->rx.next, 1);
                break;
            }
        case IBMC_MCAST_RC_ARRIVE:
            if (c->state == IBMC_MCAST_CHAN_READY)
                return ibmc_mcast_arrive_rc_in(c, from, h, body, blen);
            break;
        case IBMC_MCAST_RC_PROBE_ACK:
            if (c->state == IBMC_MCAST_CHAN_PROBING && c->rank == 0 && from > 0 &&
                !c->probe_acked[from]) {
                c->probe_acked[from] = 1;
                c->probe_acks++;
                return 0;
            }
            break;
        case IBMC_MCAST_RC_DATA:
        case IBMC_MCAST_RC_RELAY:{
                /* the root it names is believed only if the plan lets this
                 * sender pass that root's packets to this process */
                ibmc_mcast_plan_t p = plan_of(c, h->root);
                if (h->root < 0 || h->root >= c->size ||
                    !ibmc_mcast_plan_may_send(&p, from, c->rank))
                    break;
                if (c->state == IBMC_MCAST_CHAN_READY)
                    return deliver(c, body, blen, h->root, h->kind == IBMC_MCAST_RC_DATA);
                return 0;
            }
        default:
            break;
    }
    c->eng->stats->dropped++;
    return 0;
}

/* ---- the board ---- */

/* Whether anything here waits on this process's board: its own packets
 * that not every member has acknowledged, a co-root's leaves, or a retiring
 * channel's last ACKs.  An idle channel's words wait unread: ACKs are
 * cumulative, so reading one later loses nothing, and a process with many
 * channels does not scan all their boards on every progress call. */
static int board_wanted(const ibmc_mcast_chan_t * c)
{
    if (!c->has_board)
        return 0;
    if (c->state == IBMC_MCAST_CHAN_RETIRING)
        return 1;
    return c->state == IBMC_MCAST_CHAN_READY &&
        (c->relay_ring || ibmc_mcast_seq_diff(c->tx.next, c->tx.min_acked) > 0);
}

/* The ACKs members wrote on this process's board since it last looked. */
static int read_board(ibmc_mcast_chan_t * c)
{
    int err;
    for (int m = 0; m < c->size; m++) {
        uint32_t pos;
        int k = m == c->rank ? 0 : ibmc_mcast_board_take(&c->board, m, &pos);
        if (k > 0) {
            c->eng->stats->acks_read++;
            CALL(ack_in(c, m, pos));
        } else if (k < 0) {
            /* A member of an earlier channel on this board wrote late, maybe
             * over this member's ACK: ask it again.  The question claims to
             * have sent only what every member has acknowledged: it goes
             * the moment the word is read, maybe microseconds after this
             * root's last packets, which may still be on their way by
             * multicast, and a member NAKs at once whatever a question
             * says was sent and it lacks (root_sent_below).  Losses are
             * for probe_laggards to reveal, after its wait. */
            c->eng->stats->dropped++;
            c->eng->stats->acks_foreign++;
            CALL(send_ack_req(c, m, c->tx.min_acked, -1));
        }
    }
    return 0;
}

/* ---- this process's packets as a root, unacknowledged ---- */

/* Member m is a co-root of this process's own messages. */
static int is_coroot_of_mine(const ibmc_mcast_chan_t * c, int m)
{
    ibmc_mcast_plan_t p = plan_of(c, c->rank);
    return c->relay_ring && ibmc_mcast_plan_is_coroot(&p, m);
}

/* Packets of this root that some member has not acknowledged and that no
 * later root's `released` has covered (every member had delivered those). */
static int tail_pending(const ibmc_mcast_chan_t * c)
{
    return ibmc_mcast_seq_diff(c->tx.next, c->tx.min_acked) > 0 &&
        ibmc_mcast_seq_diff(c->tx.next, c->rx.released) > 0;
}

/* This channel has seen losses: this root answered NAKs on it, or its
 * receiving side learned a NAK timeout from them. */
static int seen_losses(const ibmc_mcast_chan_t * c)
{
    return c->tx.retransmits > 0 || c->nak_timeout < c->eng->params.nak_timeout_us * 1e-6;
}

/* The first questions of a stall go to the whole group, each one multicast
 * packet (IBMC_MCAST_ASK, answered in ask_in):
 *   - An RC question each would cost the root one send per member behind,
 *     and at 1 % loss in a large subgroup most of its work
 *     (SIMULATED, 2026-11-27, commits a5eea20 and e3ba389).
 *   - Even for one member behind: a member NAKs at once what a question
 *     says was sent and it lacks, and an RC question can overtake the
 *     multicast packets it is about (RC and UD are not ordered; rxe hands
 *     RC to the peer in the sender's context while multicast waits in the
 *     IP stack's softirq), so the NAK asks for packets on their way and
 *     they arrive twice.  The multicast question leaves by the same queue
 *     pair and group as those packets, behind them.
 *   - On a channel that has seen losses (seen_losses), the first asks
 *     only for losses: the stall is nearly always a member that lost a
 *     message whole, or its tail, and waits to be told (waits_for_root); the
 *     others' ACKs are merely behind their skewed turns, and answering
 *     would cost the root one message each.  The second, after a doubled
 *     wait with nothing moved, asks for ACKs too.
 *   - On one that has not, the stall is the end of a stream, whose last
 *     packets no skewed turn covers: the first question asks for ACKs.
 * Members that owe nothing drop it after a look.  Only a READY channel's
 * group is joined by every member; a retiring channel asks over RC. */
static int ask_group(ibmc_mcast_chan_t * c, int want_acks, int *asked)
{
    int err;
    ibmc_mcast_hdr_t h;
    *asked = 0;
    if (!c->eng->ops->post_ctl || c->state != IBMC_MCAST_CHAN_READY)
        return 0;
    ibmc_mcast_tx_ask(&c->tx, want_acks, &h);
    CALL(c->eng->ops->post_ctl(c->eng->io, c, &h, sizeof(h), asked));
    if (*asked) {
        c->probe.asked++;
        c->eng->stats->ack_probes++;
        c->eng->stats->asks_multicast++;
    }
    return 0;
}

/* The root's ACKs have not moved for a while, its window full or its last
 * packets unacknowledged after the broadcast returned: ask the members
 * that hold them to acknowledge now, and say where this root has sent to.
 * The first question of a stall, or the first two on a channel that has
 * seen losses, are one multicast packet each (ask_group); later ones go
 * over RC.
 *   - The ACK requests inside multicast packets may have been lost.
 *   - A member may have lost every packet of a message.  It cannot tell
 *     that from a root that has not sent yet, so it does not NAK on its own
 *     (recv_turn): this question tells it, and it NAKs at once.  Seed 002
 *     §III.D detects a lost tail by the receivers' timer; here the root,
 *     which knows what it sent, times it, and no member asks for packets
 *     that do not exist yet.
 *   - A member may be gone: a live one answers, and a dead one fails the
 *     RC question that follows the unanswered multicast ones, which ends
 *     the job naming it instead of leaving the root waiting.
 * The wait before asking starts at the NAK timeout and doubles while the
 * members stay silent (a member that is alive but outside MPI cannot
 * answer).  In a stream the ACKs keep moving and nothing is asked; when it
 * stops, the members' skewed ACKs (every ack_every packets) leave the
 * last few unacknowledged, and one question settles them.  It runs at
 * every progress call while the tail waits, and reads the clock only when
 * the ACKs moved or every params.clock_every calls (clock_due). */
static int probe_laggards(ibmc_mcast_chan_t * c)
{
    int err;
    if (!tail_pending(c)) {
        c->probe.since = 0;
        return 0;
    }
    int moved = !c->probe.since || c->tx.min_acked != c->probe.at_min ||
        c->tx.next != c->probe.at_next;
    if (!moved && !clock_due(c, &c->probe.idle))
        return 0;
    double t = now(c);
    if (moved) {
        c->probe.idle = 0;
        if (c->tx.next != c->probe.at_next)
            c->probe.after = c->nak_timeout;    /* new packets: the wait starts over */
        c->probe.at_min = c->tx.min_acked;
        c->probe.at_next = c->tx.next;
        c->probe.since = t;
        c->probe.asked = 0;
        return 0;
    }
    double waited = t - c->probe.since;
    if (waited < c->probe.after)
        return 0;
    if (waited > 2 * c->probe.after && c->probe.after < nak_max(c)) {
        /* Looked at more than one wait late: this process was not running
         * (descheduled, or outside MPI), and the members that share its
         * processors were likely held up as well.  As a receiver's stall
         * rule (recv_turn), the silence says more about the scheduler than
         * about the fabric: wait once more, twice as long, before asking. */
        c->probe.since = t;
        c->probe.after = dmin(2 * c->probe.after, nak_max(c));
        return 0;
    }
    int n = ibmc_mcast_tx_laggards(&c->tx, c->laggards, c->size);
    int asked = 0, lossy = seen_losses(c);
    if (c->probe.asked < 1 + lossy)
        CALL(ask_group(c, !lossy || c->probe.asked == 1, &asked));
    c->probe.since = t;
    c->probe.after = dmin(2 * c->probe.after, nak_max(c));
    c->probe.learned = 0;
    if (asked)
        return 0;
    /* every one of them: a dead member must be asked even when live ones
     * that stay behind are asked too.  Co-roots first, which pass the
     * question on to their subtrees while the root asks its own
     * subgroup. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            if (is_coroot_of_mine(c, c->laggards[i]) != !pass)
                continue;
            CALL(send_ack_req(c, c->laggards[i], c->tx.next, -1));
            c->eng->stats->ack_probes++;
        }
    return 0;
}

double ibmc_mcast_chan_deadline(const ibmc_mcast_chan_t * c)
{
    if ((c->state != IBMC_MCAST_CHAN_READY && c->state != IBMC_MCAST_CHAN_RETIRING) ||
        !tail_pending(c))
        return HUGE_VAL;
    return c->probe.since ? c->probe.since + c->probe.after : 0;
}

/* ---- the progress engine's turn ---- */

static int ops_turn(ibmc_mcast_chan_t * c);

int ibmc_mcast_chan_progress(ibmc_mcast_chan_t * c, int *release)
{
    int err;
    *release = 0;
    if (c->ops_head)
        CALL(ops_turn(c));
    CALL(relay_due_flush(c));
    if (board_wanted(c))
        CALL(read_board(c));
    /* retiring too: a member may still wait for this root's last message */
    if (c->state == IBMC_MCAST_CHAN_READY || c->state == IBMC_MCAST_CHAN_RETIRING)
        CALL(probe_laggards(c));
    if (c->state == IBMC_MCAST_CHAN_RETIRING)
        *release = (ibmc_mcast_seq_diff(c->tx.min_acked, c->tx.next) >= 0 && coroot_settled(c))
            || now(c) > c->retire_deadline;
    return 0;
}

/* ---- the broadcast ---- */

/* The root: every packet the window and the send queue allow, in one
 * flush (one doorbell on an HCA). */
static int root_send(ibmc_mcast_chan_t * c, int *blocked)
{
    const ibmc_mcast_ops_t *ops = c->eng->ops;
    const void *pkt;
    size_t len;
    int err, posted = 0;
    *blocked = 0;
    while (!ibmc_mcast_tx_sent_all(&c->tx)) {
        if (ops->post_room(c->eng->io, c) <= 0 || !ibmc_mcast_tx_next(&c->tx, &pkt, &len)) {
            *blocked = 1;
            break;
        }
        CALL(ops->post(c->eng->io, c, pkt, len));
        posted++;
        c->eng->stats->copies++;        /* tx_next copied the fragment into the ring */
        c->eng->stats->pkts_sent++;
        c->eng->stats->bytes_sent += len;
        if (c->relay_ring && !c->eng->params.relay_on_loss)
            CALL(relay_on(c, c->rank, pkt, len));
    }
    if (posted)
        CALL(ops->flush(c->eng->io, c));
    return 0;
}

static uint64_t received(const ibmc_mcast_chan_t * c)
{
    return c->rx.count[IBMC_MCAST_RX_DELIVERED] + c->rx.count[IBMC_MCAST_RX_HELD];
}

int ibmc_mcast_bcast_start(ibmc_mcast_chan_t * c, void *buf, uint64_t len, int root)
{
    int err;
    CALL(relay_due_flush(c));
    c->roots[root] = 1;
    c->cur.root = root;
    c->mismatch = 0;
    if (root == c->rank) {
        uint32_t first = ibmc_mcast_rx_own(&c->rx, len, c->rank);
        ibmc_mcast_tx_begin(&c->tx, first, c->rx.released, buf, len);
        return 0;
    }
    c->nak_first_at = 0;
    c->nak_watch = 0;
    uint64_t copies = c->rx.copies;     /* fragments held for it are copied out now */
    if (ibmc_mcast_rx_post(&c->rx, buf, len, root) == IBMC_MCAST_RX_MISMATCH)
        c->mismatch = 1;
    c->eng->stats->copies += c->rx.copies - copies;
    c->cur.timeout = c->nak_timeout;
    c->cur.seen = received(c);
    c->cur.idle = 0;
    c->cur.quiet_since = now(c);
    return after_packet(c);
}

/* Whether this member waits for the root's question (probe_laggards)
 * instead of NAKing on its own when its broadcast goes silent.  What a
 * timeout NAK would ask for is the tail of the message: every gap below
 * the root's highest packet seen was NAKed when that packet came
 * (after_packet).  A member cannot tell a lost tail from one the root has
 * not sent yet: the root may not have started (it may be setting up
 * another communicator's channel, or computing) or may have been
 * descheduled in the middle of the message, and a NAK would ask for
 * packets that do not exist.  If the root did send them and they were
 * lost, its own timer asks this member, and it NAKs then.  Two kinds of
 * member ask on their own:
 *   - a channel whose real losses have taught it a timeout shorter than
 *     the configured start, which the root's timer keeps: it finds a lost
 *     tail in a few round trips, sooner than the root would ask;
 *   - a co-root that gets every packet by relay
 *     (MPIR_CVAR_IBMC_MCAST_COROOT_RELAY): it does not NAK gaps or the
 *     root's questions, since the relays are on their way, and only its
 *     timer finds a relay that did not come.
 * Where the fabric loses nothing, no other member ever sends a NAK. */
static int waits_for_root(const ibmc_mcast_chan_t * c)
{
    if (!c->eng->params.relay_on_loss && is_coroot(c, c->cur.root))
        return 0;
    return c->nak_timeout >= c->eng->params.nak_timeout_us * 1e-6;
}

/* How long a receiver's broadcast may stay silent before it acts: the NAK
 * timeout; while it waits for the root, the longest one (or the configured
 * start, if longer), after which it checks that the root is still there. */
static double quiet_limit(const ibmc_mcast_chan_t * c)
{
    return waits_for_root(c) ? dmax(nak_max(c), c->cur.timeout) : c->cur.timeout;
}

/* A receiver's turn: when nothing has come for the NAK timeout, the tail
 * is missing, or all of it (waits_for_root says when this member asks for
 * that itself): it asks for all of it, and waits twice as long before asking
 * again.  The wait may have given the processor away for a while, so one
 * more poll, which does not, comes first: what arrived meanwhile is no
 * loss.  A turn in which nothing came looks at the clock only every
 * params.clock_every turns (clock_due). */
static int recv_turn(ibmc_mcast_chan_t * c)
{
    int err;
    uint64_t seen = received(c);
    if (seen == c->cur.seen && !clock_due(c, &c->cur.idle))
        return 0;
    double t = now(c);
    if (c->nak_sent_at > c->cur.quiet_since)
        c->cur.quiet_since = c->nak_sent_at;
    if (seen == c->cur.seen && t - c->cur.quiet_since > quiet_limit(c)) {
        CALL(c->eng->ops->poll(c->eng->io));
        seen = received(c);
        if (seen != c->cur.seen || ibmc_mcast_rx_complete(&c->rx))
            c->eng->stats->naks_spared++;
    }
    if (ibmc_mcast_rx_complete(&c->rx) || c->mismatch)
        return 0;
    if (seen != c->cur.seen) {
        c->cur.seen = seen;
        c->cur.idle = 0;
        c->cur.quiet_since = t;
        c->cur.timeout = c->nak_timeout;
    } else if (waits_for_root(c)) {
        if (t - c->cur.quiet_since > quiet_limit(c)) {
            /* is the root (or the co-root) still there?  An ACK asks
             * nothing of a live one, and a dead one fails the RC send,
             * which ends the job naming it.  Not a NAK: a root may take
             * longer than this to come (setting up a channel, computing),
             * and if it sent and left the communicator, its retiring
             * channel still asks.  A co-root's ACK speaks for its
             * subtree: it sends its aggregate and asks its laggards. */
            int root = c->cur.root;
            if (is_coroot(c, root)) {
                c->relay.owed[root] = 1;
                CALL(coroot_report(c, root, 1, c->rx.next));
            } else {
                CALL(send_ack(c, ack_target(c, root), c->rx.next, 1));
            }
            c->cur.quiet_since = t;
        }
    } else if (t - c->cur.quiet_since > c->cur.timeout) {
        /* The timer ran out more than its own length ago: this process was
         * not running (descheduled, or another thread held the lock), so
         * the silence says more about the scheduler than about the fabric,
         * and the root, on the same processors, was likely held up as
         * well.  The channel's timeout rises to twice that stall instead of
         * a NAK going: a NAK now asks for packets the root may not have
         * sent (the premature NAKs of an oversubscribed node), while a real
         * loss is asked for one longer timeout later.  A process that runs
         * on its own core is never this late, and keeps its timeout. */
        double late = t - c->cur.quiet_since - c->cur.timeout;
        if (late > c->cur.timeout && c->cur.timeout < nak_max(c)) {
            c->eng->stats->naks_deferred++;
            c->nak_timeout = dmin(dmax(c->nak_timeout, 2 * late), nak_max(c));
            c->cur.timeout = dmax(c->cur.timeout, c->nak_timeout);
            c->cur.quiet_since = t;
            return 0;
        }
        ibmc_mcast_range_t r[NAK_RANGES];
        int n = ibmc_mcast_rx_missing(&c->rx, 1, r, NAK_RANGES);
        for (int i = 0; i < n; i++)
            CALL(send_nak(c, c->cur.root, r[i].first, r[i].count, 0));
        if (n) {
            c->nak_quiet_from = c->cur.quiet_since;
            c->nak_sent_at = t;
            c->nak_watch = 1;
            if (!c->nak_first_at)
                c->nak_first_at = t;
        }
        c->cur.quiet_since = t;
        c->cur.timeout = dmin(2 * c->cur.timeout, nak_max(c));
    }
    return 0;
}

int ibmc_mcast_bcast_test(ibmc_mcast_chan_t * c, int *done)
{
    int err;
    *done = 0;
    if (c->cur.root == c->rank) {
        int blocked;
        CALL(root_send(c, &blocked));
        if (!blocked) {
            *done = 1;
            return 0;
        }
        return probe_laggards(c);
    }
    if (ibmc_mcast_rx_complete(&c->rx) || c->mismatch) {
        *done = 1;
        return 0;
    }
    /* not done: nothing gains from waiting with the relays any longer */
    CALL(relay_due_flush(c));
    return recv_turn(c);
}

double ibmc_mcast_bcast_deadline(const ibmc_mcast_chan_t * c)
{
    if (c->cur.root == c->rank) {
        if (!ibmc_mcast_tx_blocked(&c->tx))
            return HUGE_VAL;    /* what stops it is the send queue, not a timer */
        return ibmc_mcast_chan_deadline(c);
    }
    if (ibmc_mcast_rx_complete(&c->rx) || c->mismatch)
        return 0;
    return dmax(c->cur.quiet_since, c->nak_sent_at) + quiet_limit(c);
}

int ibmc_mcast_bcast_finish(ibmc_mcast_chan_t * c)
{
    ibmc_mcast_stats_t *st = c->eng->stats;
    if (c->rx.armed) {
        int err;
        CALL(place_end(c, 1));
    }
    if (c->cur.root == c->rank || c->mismatch) {
        st->bcasts += !c->mismatch;
        return 0;
    }
    if (c->nak_first_at > 0) {
        /* recovery: from the first request for a lost packet to the whole
         * message in place */
        unsigned long long us = (unsigned long long) ((now(c) - c->nak_first_at) * 1e6);
        st->recoveries++;
        st->recovery_us += us;
        if (us > st->recovery_worst_us)
            st->recovery_worst_us = us;
        /* acknowledged at once, not at this member's next turn in the ACK
         * schedule: a loss at the end of a stream is what the root's
         * question (probe_laggards) waits on, and it need not ask twice */
        ibmc_mcast_rx_want_ack(&c->rx, c->rx.next - 1);
    }
    st->bcasts++;
    return after_packet(c);
}

/* ---- posted broadcasts ---- */

void ibmc_mcast_op_post(ibmc_mcast_chan_t * c, ibmc_mcast_op_t * op, void *buf, uint64_t len,
                        int root, int ready)
{
    op->next = NULL;
    op->ready = ready;
    op->buf = buf;
    op->len = len;
    op->root = root;
    op->state = IBMC_MCAST_OP_QUEUED;
    op->mismatch = 0;
    op->place = NULL;
    if (c->ops_tail)
        c->ops_tail->next = op;
    else
        c->ops_head = op;
    c->ops_tail = op;
}

/* A posted broadcast this process receives, just started: received in
 * place when its caller gave it a place, the I/O side can post the
 * receives (place_arm), and nothing of it came before (a fragment held
 * for it was copied by the start, and the receives would be one off).
 * Not at a co-root of its root, which keeps every packet whole for its
 * subtree. */
static int place_arm(ibmc_mcast_chan_t * c, void *place, int rearm)
{
    const ibmc_mcast_ops_t *ops = c->eng->ops;
    int armed = 0;
    if (!place || !ops->place_arm || c->cur.root == c->rank || c->mismatch || !c->rx.posted ||
        c->rx.got != 0 || is_coroot(c, c->cur.root))
        return 0;
    int err;
    /* from here on the window writes nothing into the buffer */
    c->rx.armed = 1;
    c->place = place;
    c->place_from = c->rx.in_place;
    if (!rearm)
        c->place_rearms = 0;
    err = ops->place_arm(c->eng->io, c, place, c->rx.buf, c->rx.len, c->rx.nfrags, &armed);
    if (err || !armed)
        c->rx.armed = 0;
    else
        ibmc_mcast_rx_shadow(&c->rx);
    c->eng->stats->place_armed += c->rx.armed && !rearm;
    return err;
}

/* Before a broadcast received in place starts: the previous broadcast's
 * tail acknowledged to its root now, not at this member's next turn in
 * the ACK schedule.  A root whose last packets stay unacknowledged asks
 * the group (probe_laggards), and its question, which every receiver of
 * the group gets, would take the new broadcast's first receive. */
static int ack_tail(ibmc_mcast_chan_t * c)
{
    if (c->rx.acked == c->rx.next || c->rx.ack_root < 0 || c->rx.ack_root == c->rank)
        return 0;
    ibmc_mcast_rx_want_ack(&c->rx, c->rx.next - 1);
    return after_packet(c);
}

/* The posted broadcasts, in order, as far as each can go without waiting:
 * the first is started once its data is there, tested, and when done
 * finished and taken off, and the next started at once.  An op the
 * engine's own poll reaches again
 * (a receiver's last poll before a NAK runs the I/O side's progress) is
 * left to the turn already on the stack. */
static int ops_turn(ibmc_mcast_chan_t * c)
{
    int err = 0, done;
    if (c->ops_driving)
        return 0;
    c->ops_driving = 1;
    ibmc_mcast_op_t *op;
    while ((op = c->ops_head)) {
        if (op->state == IBMC_MCAST_OP_QUEUED) {
            if (!op->ready)
                break;
            op->state = IBMC_MCAST_OP_RUNNING;
            if (op->place && (err = ack_tail(c)))
                break;
            if ((err = ibmc_mcast_bcast_start(c, op->buf, op->len, op->root)))
                break;
            if ((err = place_arm(c, op->place, 0)))
                break;
        }
        if ((err = ibmc_mcast_bcast_test(c, &done)) || !done)
            break;
        if ((err = ibmc_mcast_bcast_finish(c)))
            break;
        op->mismatch = c->mismatch;
        c->ops_head = op->next;
        if (!c->ops_head)
            c->ops_tail = NULL;
        op->next = NULL;
        op->state = IBMC_MCAST_OP_DONE;
    }
    c->ops_driving = 0;
    return err;
}

int ibmc_mcast_bcast(ibmc_mcast_chan_t * c, void *buf, uint64_t len, int root)
{
    int err, done;
    if (c->ops_head) {
        /* behind the posted ones: MPI orders a communicator's collectives */
        ibmc_mcast_op_t op;
        ibmc_mcast_op_post(c, &op, buf, len, root, 1);
        for (;;) {
            CALL(ops_turn(c));
            if (ibmc_mcast_op_done(&op))
                break;
            CALL(c->eng->ops->wait(c->eng->io));
        }
        c->mismatch = op.mismatch;
        return 0;
    }
    CALL(ibmc_mcast_bcast_start(c, buf, len, root));
    for (;;) {
        CALL(ibmc_mcast_bcast_test(c, &done));
        if (done)
            break;
        CALL(c->eng->ops->wait(c->eng->io));
    }
    return ibmc_mcast_bcast_finish(c);
}

/* ---- the end of a channel ---- */

int ibmc_mcast_chan_retire(ibmc_mcast_chan_t * c, int *release)
{
    int err;
    /* Every root of this communicator hears where this process ended, so it
     * can free what it kept for NAKs; this process's own ring stays, to
     * answer NAKs, until every member has said the same (or a deadline). */
    uint32_t end = c->rx.next;
    *release = 0;
    CALL(relay_due_flush(c));
    c->state = IBMC_MCAST_CHAN_RETIRING;
    c->retire_deadline = now(c) + IBMC_MCAST_RETIRE_SECONDS;
    for (int r = 0; r < c->size; r++) {
        if (r == c->rank || !c->roots[r])
            continue;
        if (is_coroot(c, r)) {
            /* for its subgroup, as its leaves' last ACKs come in */
            c->headed[r] = 1;
            c->relay.owed[r] = 1;
            CALL(coroot_report(c, r, 0, 0));
        } else {
            CALL(send_ack(c, ack_target(c, r), end, 0));
        }
    }
    /* a process that never sent anything and whose leaves, if it was a
     * co-root, have all it had, has nothing to keep */
    *release = !c->roots[c->rank] && coroot_settled(c);
    return 0;
}
