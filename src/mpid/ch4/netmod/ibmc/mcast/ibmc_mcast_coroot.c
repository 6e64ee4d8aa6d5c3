/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <string.h>
#include "ibmc_mcast_coroot.h"

/* ---- the plan ---- */

static int rel_of(const ibmc_mcast_plan_t * p, int m)
{
    return (m - p->root + p->n) % p->n;
}

static int member_at(const ibmc_mcast_plan_t * p, int rel)
{
    return (p->root + rel) % p->n;
}

static int valid(const ibmc_mcast_plan_t * p, int m)
{
    return m >= 0 && m < p->n;
}

int ibmc_mcast_plan_head(const ibmc_mcast_plan_t * p, int m)
{
    if (!valid(p, m))
        return -1;
    return member_at(p, rel_of(p, m) / p->s * p->s);
}

int ibmc_mcast_plan_ack_to(const ibmc_mcast_plan_t * p, int m)
{
    if (!valid(p, m) || m == p->root)
        return -1;
    int h = ibmc_mcast_plan_head(p, m);
    return h == m ? ibmc_mcast_plan_parent(p, m) : h;
}

/* The heads form a complete K-ary tree over their subgroup numbers (K =
 * IBMC_MCAST_RELAY_FANOUT), rooted at subgroup 0 (the root's): g's parent
 * is (g - 1) / K, so a packet reaches the last co-root after
 * floor(log_K(groups)) relays or fewer (for K = 2, the log2(n/s) hops of
 * seed 000 §7.1's T_rc), and no head relays to more than K. */
int ibmc_mcast_plan_parent(const ibmc_mcast_plan_t * p, int m)
{
    if (!ibmc_mcast_plan_is_coroot(p, m))
        return -1;
    int g = rel_of(p, m) / p->s;
    return member_at(p, (g - 1) / IBMC_MCAST_RELAY_FANOUT * p->s);
}

int ibmc_mcast_plan_children(const ibmc_mcast_plan_t * p, int h, int *out, int max)
{
    if (!valid(p, h) || ibmc_mcast_plan_head(p, h) != h)
        return 0;
    int g = rel_of(p, h) / p->s, groups = ibmc_mcast_plan_groups(p), k = 0;
    for (int c = IBMC_MCAST_RELAY_FANOUT * g + 1;
         c <= IBMC_MCAST_RELAY_FANOUT * g + IBMC_MCAST_RELAY_FANOUT && c < groups && k < max; c++)
        out[k++] = member_at(p, c * p->s);
    return k;
}

int ibmc_mcast_plan_child_slots(int n, int s)
{
    ibmc_mcast_plan_t p = ibmc_mcast_plan(n, s, 0);
    int others = ibmc_mcast_plan_groups(&p) - 1;
    return others < IBMC_MCAST_RELAY_FANOUT ? others : IBMC_MCAST_RELAY_FANOUT;
}

/* A head in group g has the children K*g + 1 + j, j < K
 * (ibmc_mcast_plan_parent), so j names the child. */
int ibmc_mcast_plan_child_slot(const ibmc_mcast_plan_t * p, int h, int m)
{
    if (!valid(p, h) || ibmc_mcast_plan_parent(p, m) != h)
        return -1;
    return rel_of(p, m) / p->s - (IBMC_MCAST_RELAY_FANOUT * (rel_of(p, h) / p->s) + 1);
}

int ibmc_mcast_plan_may_send(const ibmc_mcast_plan_t * p, int from, int to)
{
    if (!valid(p, from) || !valid(p, to) || from == to || to == p->root)
        return 0;
    return from == p->root || ibmc_mcast_plan_head(p, to) == from ||
        ibmc_mcast_plan_parent(p, to) == from;
}

/* ---- the relay store ---- */

static size_t slot_size(const ibmc_mcast_relay_t * r)
{
    return sizeof(ibmc_mcast_hdr_t) + r->payload_max;
}

void ibmc_mcast_relay_init(ibmc_mcast_relay_t * r, int nmembers, int self, uint32_t window,
                           uint32_t payload_max, unsigned char *ring, int *ring_root,
                           uint32_t * leaf_acked, uint32_t * child_acked, int child_slots,
                           uint32_t * agg_sent, unsigned char *owed)
{
    memset(r, 0, sizeof(*r));
    r->nmembers = nmembers;
    r->self = self;
    r->window = window;
    r->payload_max = payload_max;
    r->ring = ring;
    r->ring_root = ring_root;
    r->leaf_acked = leaf_acked;
    r->child_acked = child_acked;
    r->child_slots = child_slots;
    r->agg_sent = agg_sent;
    r->owed = owed;
    for (uint32_t i = 0; i < window; i++)
        ring_root[i] = -1;
    memset(leaf_acked, 0, sizeof(*leaf_acked) * nmembers);
    memset(child_acked, 0, sizeof(*child_acked) * nmembers * (size_t) child_slots);
    memset(agg_sent, 0, sizeof(*agg_sent) * nmembers);
    memset(owed, 0, nmembers);
}

const void *ibmc_mcast_relay_keep(ibmc_mcast_relay_t * r, const void *pkt, size_t len, int root)
{
    ibmc_mcast_hdr_t h;
    memcpy(&h, pkt, sizeof(h));
    uint32_t i = h.seq & (r->window - 1);
    unsigned char *slot = r->ring + (size_t) i * slot_size(r);
    /* the packet was accepted, so its length was checked against the
     * header; the bound stays here for a caller that did not */
    if (len > slot_size(r))
        len = slot_size(r);
    memcpy(slot, pkt, len);
    r->ring_root[i] = root;
    r->kept++;
    return slot;
}

int ibmc_mcast_relay_lookup(ibmc_mcast_relay_t * r, uint32_t pos, int root, const void **pkt,
                            size_t * len)
{
    uint32_t i = pos & (r->window - 1);
    const unsigned char *slot = r->ring + (size_t) i * slot_size(r);
    ibmc_mcast_hdr_t h;
    memcpy(&h, slot, sizeof(h));
    if (r->ring_root[i] < 0 || r->ring_root[i] != root || h.seq != pos ||
        h.payload_len > r->payload_max) {
        r->misses++;
        return 0;
    }
    *pkt = slot;
    *len = sizeof(h) + h.payload_len;
    r->served++;
    return 1;
}

int ibmc_mcast_relay_wait(ibmc_mcast_relay_t * r, int m, int root, uint32_t pos, int timed)
{
    for (int i = 0; i < r->nwaiters; i++)
        if (r->waiters[i].member == m && r->waiters[i].pos == pos) {
            r->waiters[i].root = root;
            r->waiters[i].timed &= timed;
            return 1;
        }
    if (r->nwaiters == IBMC_MCAST_RELAY_WAITERS)
        return 0;
    r->waiters[r->nwaiters].member = m;
    r->waiters[r->nwaiters].root = root;
    r->waiters[r->nwaiters].pos = pos;
    r->waiters[r->nwaiters].timed = !!timed;
    r->nwaiters++;
    r->waits++;
    return 1;
}

int ibmc_mcast_relay_waiters(ibmc_mcast_relay_t * r, int root, uint32_t pos, int answered,
                             int *out, int max)
{
    int k = 0, kept = 0;
    for (int i = 0; i < r->nwaiters; i++) {
        ibmc_mcast_waiter_t w = r->waiters[i];
        if (w.pos == pos) {
            if (w.root == root && (!w.timed || answered) && k < max)
                out[k++] = w.member;
            continue;
        }
        if (ibmc_mcast_seq_diff(w.pos, pos) <= -(int32_t) r->window)
            continue;
        r->waiters[kept++] = w;
    }
    r->nwaiters = kept;
    return k;
}

int ibmc_mcast_relay_leaf_ack(ibmc_mcast_relay_t * r, int m, uint32_t pos)
{
    if (m < 0 || m >= r->nmembers || m == r->self) {
        r->bogus_acks++;
        return -1;
    }
    if (ibmc_mcast_seq_diff(pos, r->leaf_acked[m]) <= 0)
        return 0;
    r->leaf_acked[m] = pos;
    r->leaf_acks++;
    return 1;
}

int ibmc_mcast_relay_child_ack(ibmc_mcast_relay_t * r, const ibmc_mcast_plan_t * p, int m,
                               uint32_t pos)
{
    int j = ibmc_mcast_plan_child_slot(p, r->self, m);
    if (j < 0 || j >= r->child_slots) {
        r->bogus_acks++;
        return -1;
    }
    uint32_t *v = &r->child_acked[(size_t) p->root * r->child_slots + j];
    if (ibmc_mcast_seq_diff(pos, *v) <= 0)
        return 0;
    *v = pos;
    r->child_acks++;
    return 1;
}

/* The lowest so far, as a distance behind next, and who is behind. */
typedef struct {
    uint32_t next, released, behind;
    int *out, max, k;
} lowest_t;

static void fold(lowest_t * l, int m, uint32_t v)
{
    /* an ACK older than released counts as released; one ahead of this
     * process counts as next */
    if (ibmc_mcast_seq_diff(v, l->released) < 0)
        v = l->released;
    if (ibmc_mcast_seq_diff(v, l->next) >= 0)
        return;
    uint32_t b = l->next - v;
    if (b > l->behind)
        l->behind = b;
    if (l->out && l->k < l->max)
        l->out[l->k++] = m;
}

uint32_t ibmc_mcast_relay_aggregate(const ibmc_mcast_relay_t * r, const ibmc_mcast_plan_t * p,
                                    uint32_t next, uint32_t released, int *out, int max,
                                    int *nlag)
{
    lowest_t l = {.next = next,.released = released,.out = out,.max = max };
    if (ibmc_mcast_seq_diff(released, next) > 0)
        l.released = next;
    if (ibmc_mcast_plan_head(p, r->self) == r->self) {
        int rel0 = (r->self - p->root + p->n) % p->n, g = rel0 / p->s;
        int groups = ibmc_mcast_plan_groups(p);
        /* child co-roots first: asked first, they ask their own subtrees
         * while this one asks its leaves, and a question goes down the tree
         * in one message per level instead of one subgroup's worth */
        for (int j = 0; j < r->child_slots; j++) {
            int child = IBMC_MCAST_RELAY_FANOUT * g + 1 + j;
            if (child >= groups)
                break;
            fold(&l, (p->root + child * p->s) % p->n,
                 r->child_acked[(size_t) p->root * r->child_slots + j]);
        }
        for (int rel = rel0 + 1; rel < rel0 + p->s && rel < p->n; rel++) {
            int m = (p->root + rel) % p->n;
            fold(&l, m, r->leaf_acked[m]);
        }
    }
    if (nlag)
        *nlag = l.behind ? l.k : 0;
    return next - l.behind;
}

int ibmc_mcast_relay_due(const ibmc_mcast_relay_t * r, int root, uint32_t agg, uint32_t next,
                         uint32_t ack_every)
{
    int32_t moved = ibmc_mcast_seq_diff(agg, r->agg_sent[root]);
    if (moved <= 0)
        return 0;
    /* Half an ACK interval: each level of the tree then holds back what
     * the root learns by half an interval, not a whole one, and in long runs
     * of broadcasts the root's window (64 by default, 16 for the interval)
     * does not pass half full and ask every member for an ACK
     * (bench/sim/README.md, "The ACK tree"). */
    if (ack_every && 2 * (uint32_t) moved >= ack_every)
        return 1;
    /* An owed ACK that does not cover next yet waits for the slower members
     * below, instead of going up at each of their skewed turns: through a
     * tree of co-roots those partial reports would multiply at every level. */
    return r->owed[root] && (!ack_every || agg == next);
}

void ibmc_mcast_relay_sent(ibmc_mcast_relay_t * r, int root, uint32_t agg, uint32_t next)
{
    r->agg_sent[root] = agg;
    if (agg == next)
        r->owed[root] = 0;
}
