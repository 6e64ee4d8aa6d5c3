/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <string.h>
#include "ibmc_mcast_rx.h"

/* A message longer than this many fragments is refused; the algorithm
 * sends such messages another way long before (terabytes at any MTU). */
#define MAX_NFRAGS 0x7fffffffu

static inline ibmc_mcast_slot_t *slot_of(ibmc_mcast_rx_t * rx, uint32_t pos)
{
    return &rx->slots[pos & (rx->window - 1)];
}

static inline unsigned char *slot_data(ibmc_mcast_rx_t * rx, uint32_t pos)
{
    return rx->slot_mem + (size_t) (pos & (rx->window - 1)) * rx->payload_max;
}

static inline ibmc_mcast_rx_verdict_t count(ibmc_mcast_rx_t * rx, ibmc_mcast_rx_verdict_t v)
{
    rx->count[v]++;
    return v;
}

/* An ACK is wanted once next passes pos (the packet that asked, or where a
 * new root needs to hear from this process). */
static void want_ack(ibmc_mcast_rx_t * rx, uint32_t pos)
{
    if (!rx->ack_req || ibmc_mcast_seq_diff(pos, rx->ack_req_pos) > 0)
        rx->ack_req_pos = pos;
    rx->ack_req = 1;
}

/* Only a packet whose source has been verified as its message's root may
 * move `released`, and never past the packet's own position. */
static void take_released(ibmc_mcast_rx_t * rx, uint32_t released, uint32_t pos)
{
    if (ibmc_mcast_seq_diff(released, rx->released) > 0 && ibmc_mcast_seq_diff(released, pos) <= 0)
        rx->released = released;
}

void ibmc_mcast_rx_init(ibmc_mcast_rx_t * rx, ibmc_mcast_id_t id, uint32_t payload_max,
                        uint32_t window, uint32_t ack_every, uint32_t ack_skew,
                        ibmc_mcast_slot_t * slots, unsigned char *slot_mem)
{
    memset(rx, 0, sizeof(*rx));
    rx->id = id;
    rx->payload_max = payload_max;
    rx->window = window;
    rx->ack_every = ack_every;
    rx->ack_skew = ack_skew;
    rx->slots = slots;
    rx->slot_mem = slot_mem;
    rx->ack_root = -1;
    rx->acked_root = -1;
    memset(slots, 0, sizeof(*slots) * window);
}

ibmc_mcast_rx_verdict_t ibmc_mcast_rx_ask(ibmc_mcast_rx_t * rx, const void *pkt, size_t len,
                                          int src, uint32_t * end, int *want_acks)
{
    ibmc_mcast_hdr_t h;
    if (len != sizeof(h))
        return count(rx, IBMC_MCAST_RX_MALFORMED);
    memcpy(&h, pkt, sizeof(h));
    if (h.magic != IBMC_MCAST_MAGIC || h.version != IBMC_MCAST_VERSION || h.type != IBMC_MCAST_ASK ||
        h.payload_len != 0 || h.msg_len != 0 || h.frag != 0 || (h.flags & ~IBMC_MCAST_F_ACK_REQ))
        return count(rx, IBMC_MCAST_RX_MALFORMED);
    if (h.job_key != rx->id.job_key || h.context_id != rx->id.context_id)
        return count(rx, IBMC_MCAST_RX_FOREIGN);
    if (h.epoch != rx->id.epoch)
        return count(rx, IBMC_MCAST_RX_STALE_EPOCH);
    if (src < 0)
        return count(rx, IBMC_MCAST_RX_FOREIGN);
    /* a root sends at most a window past the slowest member's ACK, and this
     * member's ACK is at most its `next` */
    if (ibmc_mcast_seq_diff(h.seq, rx->next) > (int32_t) rx->window)
        return count(rx, IBMC_MCAST_RX_OUT_OF_WINDOW);
    *end = h.seq;
    *want_acks = !!(h.flags & IBMC_MCAST_F_ACK_REQ);
    return IBMC_MCAST_RX_DELIVERED;
}

/* Move `next` over the delivered slots; the posted message ends there. */
static void advance(ibmc_mcast_rx_t * rx)
{
    ibmc_mcast_slot_t *s;
    while ((s = slot_of(rx, rx->next))->state == IBMC_MCAST_SLOT_DONE) {
        s->state = IBMC_MCAST_SLOT_EMPTY;
        rx->next++;
    }
    if (ibmc_mcast_seq_diff(rx->seen_end, rx->next) < 0)
        rx->seen_end = rx->next;
    if (rx->posted && rx->got == rx->nfrags)
        rx->posted = 0;
}

static inline size_t frag_offset(const ibmc_mcast_rx_t * rx, uint32_t frag)
{
    return (size_t) frag * rx->payload_max;
}

ibmc_mcast_rx_verdict_t ibmc_mcast_rx_packet(ibmc_mcast_rx_t * rx, const void *pkt, size_t len,
                                             int src)
{
    if (len < sizeof(ibmc_mcast_hdr_t))
        return count(rx, IBMC_MCAST_RX_MALFORMED);
    return ibmc_mcast_rx_packet_at(rx, pkt, (const unsigned char *) pkt + sizeof(ibmc_mcast_hdr_t),
                                   len - sizeof(ibmc_mcast_hdr_t), src);
}

int ibmc_mcast_rx_awaits(const ibmc_mcast_rx_t * rx, uint32_t seq)
{
    int32_t d = ibmc_mcast_seq_diff(seq, rx->next);
    if (!rx->posted || (uint32_t) (seq - rx->first) >= rx->nfrags || d < 0 ||
        (uint32_t) d >= rx->window)
        return 0;
    return slot_of((ibmc_mcast_rx_t *) rx, seq)->state != IBMC_MCAST_SLOT_DONE;
}

void ibmc_mcast_rx_shadow(ibmc_mcast_rx_t * rx)
{
    rx->shadow_first = rx->first;
    rx->shadow_n = rx->nfrags;
    rx->shadow_root = rx->root;
    rx->shadow_len = rx->len;
}

ibmc_mcast_rx_verdict_t ibmc_mcast_rx_packet_at(ibmc_mcast_rx_t * rx, const void *hdr,
                                                const void *payload, size_t plen, int src)
{
    ibmc_mcast_hdr_t h;
    memcpy(&h, hdr, sizeof(h));         /* the packet may sit at any alignment */
    if (h.magic != IBMC_MCAST_MAGIC || h.version != IBMC_MCAST_VERSION || h.type != IBMC_MCAST_DATA)
        return count(rx, IBMC_MCAST_RX_MALFORMED);
    if (h.job_key != rx->id.job_key || h.context_id != rx->id.context_id)
        return count(rx, IBMC_MCAST_RX_FOREIGN);
    if (h.epoch != rx->id.epoch)
        return count(rx, IBMC_MCAST_RX_STALE_EPOCH);
    /* Not sent by a member: another communicator's with the same context id
     * and epoch (MPI_Comm_split's disjoint siblings share both) on a shared
     * group, or a forgery.  Judged before the position, which is the
     * sender's stream, not this one's, so that it never counts as a
     * duplicate. */
    if (src < 0)
        return count(rx, IBMC_MCAST_RX_FOREIGN);

    /* shape: the payload is what the length says, and the fragment fits the message */
    uint64_t nfrags = ibmc_mcast_nfrags(h.msg_len, rx->payload_max);
    if (h.payload_len != plen || nfrags == 0 || nfrags > MAX_NFRAGS || h.frag >= nfrags)
        return count(rx, IBMC_MCAST_RX_MALFORMED);
    uint64_t want = h.frag + 1 < nfrags ? rx->payload_max
        : h.msg_len - (uint64_t) h.frag * rx->payload_max;
    if (h.payload_len != want)
        return count(rx, IBMC_MCAST_RX_MALFORMED);

    /* The main queue's twin of a fragment of the message received in
     * place: while armed the device may still write its place, and once
     * delivered it is no network duplicate. */
    int32_t d = ibmc_mcast_seq_diff(h.seq, rx->next);
    uint32_t k = h.seq - rx->shadow_first;
    if (rx->shadow_n && k < rx->shadow_n && src == rx->shadow_root && h.frag == k &&
        h.msg_len == rx->shadow_len &&
        !(rx->posted && payload == rx->buf + frag_offset(rx, h.frag)) &&
        (rx->armed || d < 0 ||
         ((uint32_t) d < rx->window && slot_of(rx, h.seq)->state == IBMC_MCAST_SLOT_DONE)))
        return count(rx, IBMC_MCAST_RX_SHADOWED);

    /* position */
    if (d < 0)
        return count(rx, IBMC_MCAST_RX_DUPLICATE);
    if ((uint32_t) d >= rx->window)
        return count(rx, IBMC_MCAST_RX_OUT_OF_WINDOW);
    ibmc_mcast_slot_t *s = slot_of(rx, h.seq);
    if (s->state != IBMC_MCAST_SLOT_EMPTY)
        return count(rx, IBMC_MCAST_RX_DUPLICATE);

    ibmc_mcast_rx_verdict_t v;
    if (rx->posted && ibmc_mcast_seq_diff(h.seq, rx->first) < (int32_t) rx->nfrags) {
        /* a fragment of the posted message: from its root, where the root
         * numbered it, of the length this process posted */
        if (src != rx->root)
            return count(rx, IBMC_MCAST_RX_WRONG_SOURCE);
        if (h.frag != h.seq - rx->first || h.msg_len != rx->len)
            return count(rx, IBMC_MCAST_RX_MISMATCH);
        unsigned char *place = rx->buf + frag_offset(rx, h.frag);
        if (payload == place) {
            rx->in_place++;     /* the device wrote it there */
        } else {
            memcpy(place, payload, h.payload_len);
            rx->copies++;
        }
        s->state = IBMC_MCAST_SLOT_DONE;
        rx->got++;
        rx->frags_delivered++;
        if (h.flags & IBMC_MCAST_F_ACK_REQ)
            want_ack(rx, h.seq);
        take_released(rx, h.released, h.seq);
        v = IBMC_MCAST_RX_DELIVERED;
    } else {
        /* a later message's: its root and length are checked when it is posted */
        memcpy(slot_data(rx, h.seq), payload, h.payload_len);
        rx->copies++;
        s->state = IBMC_MCAST_SLOT_HELD;
        s->ack_req = !!(h.flags & IBMC_MCAST_F_ACK_REQ);
        s->released = h.released;
        s->payload_len = h.payload_len;
        s->frag = h.frag;
        s->src = src;
        s->msg_len = h.msg_len;
        v = IBMC_MCAST_RX_HELD;
    }
    /* A root sends its packets in order, so one of them reveals the loss of
     * its earlier ones; another root's (a later message, or a relay
     * overtaking the multicast) reveals nothing. */
    if (rx->posted && src == rx->root && ibmc_mcast_seq_diff(h.seq + 1, rx->seen_end) > 0)
        rx->seen_end = h.seq + 1;
    advance(rx);
    return count(rx, v);
}

ibmc_mcast_rx_verdict_t ibmc_mcast_rx_post(ibmc_mcast_rx_t * rx, void *buf, uint64_t len, int root)
{
    uint64_t nfrags = ibmc_mcast_nfrags(len, rx->payload_max);
    if (nfrags > MAX_NFRAGS)
        return IBMC_MCAST_RX_MALFORMED;
    rx->ack_root = root;
    rx->nak_mark = rx->next;
    if (nfrags == 0)
        return IBMC_MCAST_RX_DELIVERED;
    rx->posted = 1;
    rx->root = root;
    rx->buf = buf;
    rx->len = len;
    rx->first = rx->next;
    rx->nfrags = (uint32_t) nfrags;
    rx->got = 0;
    /* The root may start no further than what it knows of every member +
     * window (ibmc_mcast_tx.h): if the message does not fit past what it
     * knows of this process, it may be unable to send the packet that would
     * ask for ACKs, so say where this process is now.  A new root knows
     * `released`, what the previous root knew of all; the root this process
     * last acknowledged to knows that ACK too.  With `released` alone,
     * every receiver of a root that streams with a full window (its packets
     * carry released = next - window) would acknowledge every message, and
     * the root would handle an ACK per member per message. */
    uint32_t known = rx->released;
    if (rx->acked_root == root && ibmc_mcast_seq_diff(rx->acked, known) > 0)
        known = rx->acked;
    if (ibmc_mcast_seq_diff(rx->first + rx->nfrags, known + rx->window) > 0)
        want_ack(rx, rx->first - 1);

    uint32_t span = rx->nfrags < rx->window ? rx->nfrags : rx->window;
    for (uint32_t i = 0; i < span; i++) {
        uint32_t pos = rx->first + i;
        ibmc_mcast_slot_t *s = slot_of(rx, pos);
        if (s->state != IBMC_MCAST_SLOT_HELD)
            continue;
        if (s->src != root) {
            s->state = IBMC_MCAST_SLOT_EMPTY;
            rx->count[IBMC_MCAST_RX_WRONG_SOURCE]++;
            continue;
        }
        if (s->frag != i || s->msg_len != len) {
            rx->count[IBMC_MCAST_RX_MISMATCH]++;
            return IBMC_MCAST_RX_MISMATCH;
        }
        memcpy(rx->buf + frag_offset(rx, i), slot_data(rx, pos), s->payload_len);
        rx->copies++;
        if (s->ack_req)
            want_ack(rx, pos);
        take_released(rx, s->released, pos);
        s->state = IBMC_MCAST_SLOT_DONE;
        rx->got++;
        rx->frags_delivered++;
        if (ibmc_mcast_seq_diff(pos + 1, rx->seen_end) > 0)
            rx->seen_end = pos + 1;
    }
    advance(rx);
    return IBMC_MCAST_RX_DELIVERED;
}

uint32_t ibmc_mcast_rx_own(ibmc_mcast_rx_t * rx, uint64_t len, int self)
{
    uint32_t first = rx->next;
    uint64_t nfrags = ibmc_mcast_nfrags(len, rx->payload_max);
    uint64_t span = nfrags < rx->window ? nfrags : rx->window;
    for (uint64_t i = 0; i < span; i++) {
        ibmc_mcast_slot_t *s = slot_of(rx, first + (uint32_t) i);
        if (s->state == IBMC_MCAST_SLOT_HELD) {
            s->state = IBMC_MCAST_SLOT_EMPTY;
            rx->count[IBMC_MCAST_RX_WRONG_SOURCE]++;
        }
    }
    rx->next = first + (uint32_t) nfrags;
    if (ibmc_mcast_seq_diff(rx->seen_end, rx->next) < 0)
        rx->seen_end = rx->next;
    rx->nak_mark = rx->next;
    /* a root does not acknowledge its own packets */
    rx->acked = rx->next;
    rx->ack_root = self;
    rx->acked_root = self;
    return first;
}

/* The posted message's missing positions in [start, end), at most max
 * ranges; nak_mark moves past what they cover. */
static int missing_in(ibmc_mcast_rx_t * rx, uint32_t start, uint32_t end,
                      ibmc_mcast_range_t * out, int max)
{
    int n = 0;
    uint32_t pos = start;
    while (ibmc_mcast_seq_diff(end, pos) > 0) {
        if (slot_of(rx, pos)->state == IBMC_MCAST_SLOT_EMPTY) {
            if (n == max)
                break;
            uint32_t run = 0;
            while (ibmc_mcast_seq_diff(end, pos + run) > 0 &&
                   slot_of(rx, pos + run)->state == IBMC_MCAST_SLOT_EMPTY)
                run++;
            out[n].first = pos;
            out[n].count = run;
            n++;
            pos += run;
        } else {
            pos++;
        }
    }
    if (ibmc_mcast_seq_diff(pos, rx->nak_mark) > 0)
        rx->nak_mark = pos;
    return n;
}

/* One past the last position of the posted message inside the window. */
static uint32_t posted_end(const ibmc_mcast_rx_t * rx)
{
    uint32_t end = rx->first + rx->nfrags;
    uint32_t lim = rx->next + rx->window;
    return ibmc_mcast_seq_diff(end, lim) > 0 ? lim : end;
}

int ibmc_mcast_rx_missing(ibmc_mcast_rx_t * rx, int all, ibmc_mcast_range_t * out, int max)
{
    if (!rx->posted || max <= 0)
        return 0;
    uint32_t end = posted_end(rx);
    uint32_t start = rx->next;
    if (!all) {
        if (ibmc_mcast_seq_diff(end, rx->seen_end) > 0)
            end = rx->seen_end;
        if (ibmc_mcast_seq_diff(rx->nak_mark, start) > 0)
            start = rx->nak_mark;
    }
    return missing_in(rx, start, end, out, max);
}

int ibmc_mcast_rx_missing_below(ibmc_mcast_rx_t * rx, uint32_t end, ibmc_mcast_range_t * out,
                                int max)
{
    if (!rx->posted || max <= 0)
        return 0;
    uint32_t lim = posted_end(rx);
    if (ibmc_mcast_seq_diff(end, lim) > 0)
        end = lim;
    return missing_in(rx, rx->next, end, out, max);
}

void ibmc_mcast_rx_want_ack(ibmc_mcast_rx_t * rx, uint32_t pos)
{
    want_ack(rx, pos);
}

void ibmc_mcast_rx_sent_below(ibmc_mcast_rx_t * rx, uint32_t end)
{
    if (!rx->posted)
        return;
    uint32_t msg_end = rx->first + rx->nfrags;
    if (ibmc_mcast_seq_diff(end, msg_end) > 0)
        end = msg_end;
    if (ibmc_mcast_seq_diff(end, rx->seen_end) > 0)
        rx->seen_end = end;
}

int ibmc_mcast_rx_ack_due(const ibmc_mcast_rx_t * rx)
{
    if (rx->ack_req && ibmc_mcast_seq_diff(rx->next, rx->ack_req_pos) > 0)
        return 1;
    if (rx->ack_every == 0 || rx->next == rx->acked)
        return 0;
    /* the first position at or after `acked` whose turn is ours */
    uint32_t m = rx->ack_every - 1;
    uint32_t turn = rx->acked + ((rx->ack_skew - rx->acked) & m);
    return ibmc_mcast_seq_diff(rx->next, turn) > 0;
}

uint32_t ibmc_mcast_rx_ack_take(ibmc_mcast_rx_t * rx)
{
    rx->acked = rx->next;
    rx->acked_root = rx->ack_root;
    if (rx->ack_req && ibmc_mcast_seq_diff(rx->next, rx->ack_req_pos) > 0)
        rx->ack_req = 0;
    return rx->next;
}
