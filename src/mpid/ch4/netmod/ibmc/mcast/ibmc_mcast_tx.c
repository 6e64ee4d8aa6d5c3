/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <string.h>
#include "ibmc_mcast_tx.h"

static inline size_t slot_size(const ibmc_mcast_tx_t * tx)
{
    return sizeof(ibmc_mcast_hdr_t) + tx->payload_max;
}

static inline unsigned char *slot_at(ibmc_mcast_tx_t * tx, uint32_t pos)
{
    return tx->ring + (size_t) (pos & (tx->window - 1)) * slot_size(tx);
}

/* Does member m acknowledge to this root? */
static inline int acker(const ibmc_mcast_tx_t * tx, int m)
{
    return m != tx->self && (!tx->ackers || tx->ackers[m]);
}

/* min_acked and at_min from scratch.  Positions are compared by how far
 * they lie behind `ref`, which no ACK passes: between two messages of this
 * root an ACK may be ahead of next (see ibmc_mcast_tx_ack), by less than
 * 2^30. */
static void recompute_min(ibmc_mcast_tx_t * tx, uint32_t ref)
{
    uint32_t behind = 0;
    int at = 0;
    for (int m = 0; m < tx->nmembers; m++) {
        if (!acker(tx, m))
            continue;
        uint32_t b = ref - tx->acked[m];
        if (at == 0 || b > behind) {
            behind = b;
            at = 1;
        } else if (b == behind) {
            at++;
        }
    }
    tx->min_acked = ref - behind;
    tx->at_min = at;
}

void ibmc_mcast_tx_init(ibmc_mcast_tx_t * tx, ibmc_mcast_id_t id, uint32_t payload_max,
                        uint32_t window, int nmembers, int self, uint32_t * acked,
                        unsigned char *ring)
{
    memset(tx, 0, sizeof(*tx));
    tx->id = id;
    tx->payload_max = payload_max;
    tx->window = window;
    tx->nmembers = nmembers;
    tx->self = self;
    tx->acked = acked;
    tx->ring = ring;
    memset(acked, 0, sizeof(*acked) * nmembers);
    /* lookups compare the slot's sequence number: no garbage may match */
    memset(ring, 0, (size_t) window * slot_size(tx));
    recompute_min(tx, 0);
}

void ibmc_mcast_tx_set_ackers(ibmc_mcast_tx_t * tx, const unsigned char *ackers)
{
    tx->ackers = ackers;
    recompute_min(tx, tx->next);
}

void ibmc_mcast_tx_begin(ibmc_mcast_tx_t * tx, uint32_t first, uint32_t released,
                         const void *data, uint64_t len)
{
    /* What members told this root when it last sent may be older than what
     * the previous root knew; nothing a member said can be ahead of first.
     * When this root sent the stream's last message itself, no ACK came
     * ahead of it since, and the previous roots' released is not past its
     * minimum, every ACK already lies in [min_acked, first] and min_acked is
     * exact: the O(ackers) clamp and minimum are skipped, so a root that
     * broadcasts back to back spends the same per message at any size. */
    if (first != tx->next || tx->acked_ahead || ibmc_mcast_seq_diff(released, tx->min_acked) > 0) {
        for (int m = 0; m < tx->nmembers; m++) {
            if (!acker(tx, m))
                continue;
            if (ibmc_mcast_seq_diff(tx->acked[m], released) < 0 ||
                ibmc_mcast_seq_diff(tx->acked[m], first) > 0)
                tx->acked[m] = released;
        }
        recompute_min(tx, first);
        tx->acked_ahead = 0;
    }
    /* ACKs are asked for every window/4 packets of the stream, not once a
     * message: a root that streams small messages would otherwise ask on
     * every one, and every member would answer every one.  Another root's
     * messages came in between: its requests went to it, so ask afresh. */
    if (first != tx->next)
        tx->last_ack_req = first - tx->window;
    tx->next = first;
    tx->data = data;
    tx->len = len;
    tx->nfrags = (uint32_t) ibmc_mcast_nfrags(len, tx->payload_max);
    tx->sent = 0;
}

int ibmc_mcast_tx_next(ibmc_mcast_tx_t * tx, const void **pkt, size_t * len)
{
    if (tx->sent == tx->nfrags || ibmc_mcast_tx_blocked(tx))
        return 0;
    unsigned char *slot = slot_at(tx, tx->next);
    uint64_t off = (uint64_t) tx->sent * tx->payload_max;
    uint32_t outstanding = tx->next - tx->min_acked;
    ibmc_mcast_hdr_t h = {
        .magic = IBMC_MCAST_MAGIC,
        .version = IBMC_MCAST_VERSION,
        .type = IBMC_MCAST_DATA,
        .payload_len = (uint16_t) (tx->len - off < tx->payload_max ? tx->len - off : tx->payload_max),
        .context_id = tx->id.context_id,
        .epoch = tx->id.epoch,
        .seq = tx->next,
        .frag = tx->sent,
        .released = tx->min_acked,
        .job_key = tx->id.job_key,
        .msg_len = tx->len,
    };
    if (outstanding >= tx->window / 2 &&
        (uint32_t) ibmc_mcast_seq_diff(tx->next, tx->last_ack_req) >= tx->window / 4) {
        h.flags |= IBMC_MCAST_F_ACK_REQ;
        tx->last_ack_req = tx->next;
    }
    memcpy(slot, &h, sizeof(h));
    memcpy(slot + sizeof(h), tx->data + off, h.payload_len);
    *pkt = slot;
    *len = sizeof(h) + h.payload_len;
    tx->next++;
    tx->sent++;
    tx->packets++;
    if (tx->nmembers <= 1)      /* nobody to wait for */
        tx->min_acked = tx->next;
    return 1;
}

int ibmc_mcast_tx_ack(ibmc_mcast_tx_t * tx, int member, uint32_t pos)
{
    /* While a message is being sent, nobody can have delivered past it.
     * Between messages, a member that entered this root's next broadcast
     * before the root did acknowledges where that message will start. */
    int sending = tx->sent < tx->nfrags;
    if (member < 0 || member >= tx->nmembers || !acker(tx, member) ||
        (sending && ibmc_mcast_seq_diff(pos, tx->next) > 0)) {
        tx->bogus_acks++;
        return -1;
    }
    int32_t d = ibmc_mcast_seq_diff(pos, tx->acked[member]);
    if (d < 0) {
        tx->old_acks++;
        return 0;
    }
    if (d == 0)
        return 0;
    int was_min = tx->acked[member] == tx->min_acked;
    if (ibmc_mcast_seq_diff(pos, tx->next) > 0)
        tx->acked_ahead = 1;
    tx->acked[member] = pos;
    tx->acks++;
    if (was_min && --tx->at_min == 0)
        recompute_min(tx, tx->next + 0x40000000u);
    return 0;
}

int ibmc_mcast_tx_laggards(const ibmc_mcast_tx_t * tx, int *out, int max)
{
    int n = 0, full = ibmc_mcast_tx_blocked(tx);
    if (tx->nmembers <= 1 || ibmc_mcast_seq_diff(tx->next, tx->min_acked) <= 0)
        return 0;
    for (int m = 0; m < tx->nmembers && n < max; m++)
        if (acker(tx, m) && (full ? tx->acked[m] == tx->min_acked
                             : ibmc_mcast_seq_diff(tx->next, tx->acked[m]) > 0))
            out[n++] = m;
    return n;
}

int ibmc_mcast_tx_lookup(ibmc_mcast_tx_t * tx, uint32_t pos, const void **pkt, size_t * len)
{
    if (ibmc_mcast_seq_diff(pos, tx->next) >= 0) {
        tx->early_naks++;
        return 0;
    }
    if (ibmc_mcast_seq_diff(pos, tx->min_acked) < 0) {
        tx->stale_naks++;
        return 0;
    }
    const unsigned char *slot = slot_at(tx, pos);
    ibmc_mcast_hdr_t h;
    memcpy(&h, slot, sizeof(h));
    /* positions in between belong to other roots' messages */
    if (h.magic != IBMC_MCAST_MAGIC || h.seq != pos) {
        tx->bogus_naks++;
        return 0;
    }
    *pkt = slot;
    *len = sizeof(h) + h.payload_len;
    tx->retransmits++;
    return 1;
}

void ibmc_mcast_tx_ask(const ibmc_mcast_tx_t * tx, int want_acks, ibmc_mcast_hdr_t * h)
{
    memset(h, 0, sizeof(*h));
    h->flags = want_acks ? IBMC_MCAST_F_ACK_REQ : 0;
    h->magic = IBMC_MCAST_MAGIC;
    h->version = IBMC_MCAST_VERSION;
    h->type = IBMC_MCAST_ASK;
    h->context_id = tx->id.context_id;
    h->epoch = tx->id.epoch;
    h->seq = tx->next;
    h->job_key = tx->id.job_key;
}
