/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The co-root plan and a co-root's relay store (ibmc_mcast_coroot.h). */

#include <stdio.h>
#include <string.h>
#include "ibmc_mcast_coroot.h"
#include "tap.h"

#define MAXN 70
#define P 16
#define W 8

static int ceil_log2(int x)
{
    int k = 0;
    while ((1 << k) < x)
        k++;
    return k;
}

static int floor_log2(int x)
{
    int k = 0;
    while ((2 << k) <= x)
        k++;
    return k;
}

/* Walks the relay tree from the root: every co-root is reached exactly once,
 * within floor(log2(groups)) relays, and only from its parent; no head
 * relays to more than IBMC_MCAST_RELAY_FANOUT, so the root's sends do not
 * grow with the node count. */
static int check_tree(const ibmc_mcast_plan_t * p)
{
    int depth[MAXN], queue[MAXN], qn = 0, bad = 0, coroots = 0;
    for (int m = 0; m < p->n; m++) {
        depth[m] = -1;
        coroots += ibmc_mcast_plan_is_coroot(p, m);
    }
    depth[p->root] = 0;
    queue[qn++] = p->root;
    for (int i = 0; i < qn; i++) {
        int kids[MAXN], k = ibmc_mcast_plan_children(p, queue[i], kids, MAXN);
        bad |= k > IBMC_MCAST_RELAY_FANOUT;
        for (int j = 0; j < k; j++) {
            int c = kids[j];
            bad |= !ibmc_mcast_plan_is_coroot(p, c) || depth[c] >= 0 ||
                ibmc_mcast_plan_parent(p, c) != queue[i] ||
                !ibmc_mcast_plan_may_send(p, queue[i], c);
            depth[c] = depth[queue[i]] + 1;
            bad |= depth[c] > floor_log2(ibmc_mcast_plan_groups(p));
            /* each child has a slot of its own below its parent */
            int slot = ibmc_mcast_plan_child_slot(p, queue[i], c);
            bad |= slot < 0 || slot >= ibmc_mcast_plan_child_slots(p->n, p->s);
            for (int o = 0; o < j; o++)
                bad |= ibmc_mcast_plan_child_slot(p, queue[i], kids[o]) == slot;
            queue[qn++] = c;
        }
    }
    bad |= qn != coroots + 1 || coroots != ibmc_mcast_plan_groups(p) - 1;
    return !bad;
}

/* Head h's children in plan p are exactly want[0..n-1], in order. */
static int children_are(const ibmc_mcast_plan_t * p, int h, const int *want, int n)
{
    int kids[MAXN], k = ibmc_mcast_plan_children(p, h, kids, MAXN);
    if (k != n)
        return 0;
    for (int i = 0; i < n; i++)
        if (kids[i] != want[i])
            return 0;
    return 1;
}

int main(void)
{
    TAP_TEST("every layout: subgroups of s from the root, a tree over the heads") {
        int fails = 0;
        for (int n = 1; n <= 40; n++)
            for (int s = 1; s <= n + 2; s++)
                for (int root = 0; root < n; root++) {
                    ibmc_mcast_plan_t p = ibmc_mcast_plan(n, s, root);
                    int sizes[MAXN] = { 0 };
                    fails += !check_tree(&p);
                    for (int m = 0; m < n; m++) {
                        int h = ibmc_mcast_plan_head(&p, m), to = ibmc_mcast_plan_ack_to(&p, m);
                        sizes[h]++;
                        if (m == root) {
                            fails += h != root || to != -1;
                            continue;
                        }
                        /* ACKs climb to the root: a leaf's to its head, a
                         * co-root's to its parent, within the tree's depth + 1 */
                        fails += to < 0 || to != (h == m ? ibmc_mcast_plan_parent(&p, m) : h);
                        int hops = 1;
                        for (int x = to; x != root && x >= 0 && hops <= n; x = ibmc_mcast_plan_ack_to(&p, x))
                            hops++;
                        fails += hops > ceil_log2(ibmc_mcast_plan_groups(&p)) + 1;
                        /* only a parent names a child */
                        for (int x = 0; x < n; x++)
                            fails += (ibmc_mcast_plan_child_slot(&p, x, m) >= 0) !=
                                (h == m && x == ibmc_mcast_plan_parent(&p, m));
                        /* its head, and only its head or the root, retransmits to it */
                        fails += !ibmc_mcast_plan_may_send(&p, root, m);
                        if (h != m)
                            fails += to != h || !ibmc_mcast_plan_may_send(&p, h, m);
                        for (int x = 0; x < n; x++)
                            if (x != root && x != h && x != ibmc_mcast_plan_parent(&p, m))
                                fails += ibmc_mcast_plan_may_send(&p, x, m);
                        /* nothing goes to the root */
                        fails += ibmc_mcast_plan_may_send(&p, m, root);
                    }
                    for (int m = 0; m < n; m++)
                        if (sizes[m])
                            fails += sizes[m] > s || ibmc_mcast_plan_head(&p, m) != m;
                }
        TAP_EXPECT_EQ(fails, 0);
    }

    TAP_TEST("s at least n: no co-roots, every member acknowledges to the root") {
        ibmc_mcast_plan_t p = ibmc_mcast_plan(8, 8, 5);
        int kids[8];
        for (int m = 0; m < 8; m++) {
            TAP_EXPECT(!ibmc_mcast_plan_is_coroot(&p, m));
            if (m != 5)
                TAP_EXPECT_EQ(ibmc_mcast_plan_ack_to(&p, m), 5);
        }
        TAP_EXPECT_EQ(ibmc_mcast_plan_children(&p, 5, kids, 8), 0);
    }

    TAP_TEST("a known layout: 10 members, s = 3, root 4") {
        /* relative order 4 5 6 | 7 8 9 | 0 1 2 | 3 */
        ibmc_mcast_plan_t p = ibmc_mcast_plan(10, 3, 4);
        int kids[8];
        TAP_EXPECT_EQ(ibmc_mcast_plan_groups(&p), 4);
        TAP_EXPECT_EQ(ibmc_mcast_plan_head(&p, 6), 4);
        TAP_EXPECT_EQ(ibmc_mcast_plan_head(&p, 9), 7);
        TAP_EXPECT_EQ(ibmc_mcast_plan_head(&p, 2), 0);
        TAP_EXPECT_EQ(ibmc_mcast_plan_head(&p, 3), 3);
        TAP_EXPECT_EQ(ibmc_mcast_plan_ack_to(&p, 8), 7);
        TAP_EXPECT_EQ(ibmc_mcast_plan_ack_to(&p, 7), 4);
        TAP_EXPECT(children_are(&p, 4, (int[]) { 7, 0 }, 2));
        TAP_EXPECT(children_are(&p, 7, (int[]) { 3 }, 1));
        TAP_EXPECT_EQ(ibmc_mcast_plan_parent(&p, 3), 7);
        TAP_EXPECT_EQ(ibmc_mcast_plan_children(&p, 8, kids, 8), 0);     /* a leaf */
        TAP_EXPECT_EQ(ibmc_mcast_plan_children(&p, 4, kids, 1), 1);     /* at most max */
    }

    TAP_TEST("a known layout: 64 members, s = 2, root 0: the root relays to 2 of 31 co-roots") {
        /* groups g = m / 2; g's children 2g + 1 and 2g + 2 */
        ibmc_mcast_plan_t p = ibmc_mcast_plan(64, 2, 0);
        TAP_EXPECT(children_are(&p, 0, (int[]) { 2, 4 }, 2));
        TAP_EXPECT(children_are(&p, 6, (int[]) { 14, 16 }, 2));
        TAP_EXPECT(children_are(&p, 32, NULL, 0));      /* g16: a leaf of the tree */
        TAP_EXPECT_EQ(ibmc_mcast_plan_parent(&p, 62), 30);      /* g31, the first child of g15 */
        TAP_EXPECT_EQ(ibmc_mcast_plan_child_slot(&p, 30, 62), 0);
        TAP_EXPECT_EQ(ibmc_mcast_plan_child_slots(64, 2), 2);
    }

    static unsigned char ring[W * (sizeof(ibmc_mcast_hdr_t) + P)];
    int ring_root[W];
    uint32_t leaf_acked[10], agg_sent[10], child_acked[10 * 2];
    unsigned char owed[10];
    ibmc_mcast_relay_t r;

    TAP_TEST("kept packets come back bit-exact until their slot is reused") {
        ibmc_mcast_relay_init(&r, 10, 7, W, P, ring, ring_root, leaf_acked, child_acked, 2, agg_sent, owed);
        unsigned char pkt[sizeof(ibmc_mcast_hdr_t) + P];
        const void *got;
        size_t len;
        TAP_EXPECT(!ibmc_mcast_relay_lookup(&r, 0, 4, &got, &len));      /* empty: a miss */
        for (uint32_t pos = 0; pos < 12; pos++) {
            ibmc_mcast_hdr_t h = {.magic = IBMC_MCAST_MAGIC,.seq = pos,.payload_len = P - 1 };
            memcpy(pkt, &h, sizeof(h));
            memset(pkt + sizeof(h), (int) pos + 1, P);
            ibmc_mcast_relay_keep(&r, pkt, sizeof(h) + P - 1, 4);
        }
        int ok = 1;
        for (uint32_t pos = 4; pos < 12; pos++) {
            ok &= ibmc_mcast_relay_lookup(&r, pos, 4, &got, &len) &&
                len == sizeof(ibmc_mcast_hdr_t) + P - 1 &&
                ((const unsigned char *) got)[sizeof(ibmc_mcast_hdr_t) + P - 2] == pos + 1;
        }
        TAP_EXPECT(ok);
        /* 0-3 were overwritten by 8-11 */
        TAP_EXPECT(!ibmc_mcast_relay_lookup(&r, 3, 4, &got, &len));
        TAP_EXPECT(!ibmc_mcast_relay_lookup(&r, 12, 4, &got, &len));
        /* kept as root 4's: not an answer for a member that asks for root 5's */
        TAP_EXPECT(!ibmc_mcast_relay_lookup(&r, 8, 5, &got, &len));
        TAP_EXPECT_EQ(r.misses, 4);
        TAP_EXPECT_EQ(r.served, 8);
    }

    TAP_TEST("a NAK for a packet not yet relayed is answered when it comes") {
        int who[IBMC_MCAST_RELAY_WAITERS + 1];
        ibmc_mcast_relay_init(&r, 10, 7, W, P, ring, ring_root, leaf_acked, child_acked, 2, agg_sent, owed);
        TAP_EXPECT_EQ(ibmc_mcast_relay_wait(&r, 8, 4, 5, 0), 1);
        TAP_EXPECT_EQ(ibmc_mcast_relay_wait(&r, 9, 4, 5, 0), 1);
        TAP_EXPECT_EQ(ibmc_mcast_relay_wait(&r, 8, 4, 5, 0), 1);   /* asked again: kept once */
        TAP_EXPECT_EQ(ibmc_mcast_relay_wait(&r, 8, 4, 6, 0), 1);
        TAP_EXPECT_EQ(r.waits, 3);
        TAP_EXPECT_EQ(ibmc_mcast_relay_waiters(&r, 4, 4, 0, who, 8), 0);
        TAP_EXPECT_EQ(ibmc_mcast_relay_waiters(&r, 4, 5, 0, who, 8), 2);
        TAP_EXPECT(who[0] == 8 && who[1] == 9);
        TAP_EXPECT_EQ(ibmc_mcast_relay_waiters(&r, 4, 5, 0, who, 8), 0);   /* answered once */
        /* a window later, a waiter for 6 is stale: every member has it */
        TAP_EXPECT_EQ(ibmc_mcast_relay_waiters(&r, 4, 6 + W, 0, who, 8), 0);
        TAP_EXPECT_EQ(r.nwaiters, 0);
        /* the list is bounded */
        for (int i = 0; i < IBMC_MCAST_RELAY_WAITERS; i++)
            ibmc_mcast_relay_wait(&r, 8, 4, 100 + (uint32_t) i, 0);
        TAP_EXPECT_EQ(ibmc_mcast_relay_wait(&r, 9, 4, 100, 0), 0);
    }

    TAP_TEST("a timeout NAK's waiter is answered only by a packet this co-root had to ask for") {
        int who[8];
        ibmc_mcast_relay_init(&r, 10, 7, W, P, ring, ring_root, leaf_acked, child_acked, 2, agg_sent, owed);
        /* by multicast: the leaf's timeout NAK was early, it has the packet too */
        TAP_EXPECT_EQ(ibmc_mcast_relay_wait(&r, 8, 4, 5, 1), 1);
        TAP_EXPECT_EQ(ibmc_mcast_relay_waiters(&r, 4, 5, 0, who, 8), 0);
        TAP_EXPECT_EQ(r.nwaiters, 0);   /* and forgotten: the leaf asks again if not */
        /* as the answer to this co-root's NAK: lost here, likely there too */
        TAP_EXPECT_EQ(ibmc_mcast_relay_wait(&r, 8, 4, 6, 1), 1);
        TAP_EXPECT_EQ(ibmc_mcast_relay_wait(&r, 9, 4, 6, 0), 1);
        TAP_EXPECT_EQ(ibmc_mcast_relay_waiters(&r, 4, 6, 1, who, 8), 2);
        TAP_EXPECT(who[0] == 8 && who[1] == 9);
        /* a gap NAK after a timeout NAK for the same packet proves it was sent */
        TAP_EXPECT_EQ(ibmc_mcast_relay_wait(&r, 8, 4, 7, 1), 1);
        TAP_EXPECT_EQ(ibmc_mcast_relay_wait(&r, 8, 4, 7, 0), 1);
        TAP_EXPECT_EQ(ibmc_mcast_relay_waiters(&r, 4, 7, 0, who, 8), 1);
        TAP_EXPECT_EQ(who[0], 8);
        /* a member that took the position for another root's gets nothing */
        TAP_EXPECT_EQ(ibmc_mcast_relay_wait(&r, 8, 3, 9, 0), 1);
        TAP_EXPECT_EQ(ibmc_mcast_relay_waiters(&r, 4, 9, 1, who, 8), 0);
        TAP_EXPECT_EQ(r.nwaiters, 0);
    }

    TAP_TEST("the aggregate is the slowest of the co-root, its leaves and its child co-roots; "
             "every one behind is named") {
        /* 10 members, s = 3, root 4: co-root 7 heads 8 and 9, and co-root 3
         * is its child in the relay tree */
        ibmc_mcast_plan_t p = ibmc_mcast_plan(10, 3, 4);
        int lag[4], nlag;
        ibmc_mcast_relay_init(&r, 10, 7, W, P, ring, ring_root, leaf_acked, child_acked, 2, agg_sent, owed);
        TAP_EXPECT_EQ(ibmc_mcast_relay_aggregate(&r, &p, 5, 0, lag, 4, &nlag), 0);
        TAP_EXPECT_EQ(nlag, 3);
        TAP_EXPECT(lag[0] == 3 && lag[1] == 8 && lag[2] == 9);  /* the child co-root first */
        TAP_EXPECT_EQ(ibmc_mcast_relay_child_ack(&r, &p, 3, 7), 1);     /* ahead: counts as 5 */
        TAP_EXPECT_EQ(ibmc_mcast_relay_aggregate(&r, &p, 5, 0, lag, 4, &nlag), 0);
        TAP_EXPECT_EQ(nlag, 2);
        ibmc_mcast_relay_leaf_ack(&r, 8, 3);
        TAP_EXPECT_EQ(ibmc_mcast_relay_aggregate(&r, &p, 5, 0, lag, 4, &nlag), 0);
        TAP_EXPECT_EQ(nlag, 2);         /* 9 holds it at 0, and 8 is behind too */
        TAP_EXPECT(lag[0] == 8 && lag[1] == 9);
        TAP_EXPECT_EQ(ibmc_mcast_relay_aggregate(&r, &p, 5, 0, lag, 1, &nlag), 0);
        TAP_EXPECT_EQ(nlag, 1);         /* at most max of them */
        ibmc_mcast_relay_leaf_ack(&r, 9, 6);    /* ahead of the co-root: counts as 5 */
        TAP_EXPECT_EQ(ibmc_mcast_relay_aggregate(&r, &p, 5, 0, lag, 4, &nlag), 3);
        TAP_EXPECT_EQ(lag[0], 8);
        /* every member had passed `released`: an older ACK counts as it */
        TAP_EXPECT_EQ(ibmc_mcast_relay_aggregate(&r, &p, 5, 4, lag, 4, &nlag), 4);
        ibmc_mcast_relay_leaf_ack(&r, 8, 9);
        TAP_EXPECT_EQ(ibmc_mcast_relay_aggregate(&r, &p, 5, 0, lag, 4, &nlag), 5);
        TAP_EXPECT_EQ(nlag, 0);
        /* ACKs only move forward; from itself or no member they are bogus */
        TAP_EXPECT_EQ(ibmc_mcast_relay_leaf_ack(&r, 8, 2), 0);
        TAP_EXPECT_EQ(leaf_acked[8], 9);
        TAP_EXPECT_EQ(ibmc_mcast_relay_leaf_ack(&r, 7, 9), -1);
        TAP_EXPECT_EQ(ibmc_mcast_relay_leaf_ack(&r, 10, 9), -1);
        TAP_EXPECT_EQ(r.bogus_acks, 2);
        /* a child's aggregate counts under its root only: under root 1
         * (groups 1 2 3 | 4 5 6 | 7 8 9 | 0) co-root 7 heads group 2, whose
         * child would be group 6: none, so 3 names no child of 7 there */
        ibmc_mcast_plan_t o = ibmc_mcast_plan(10, 3, 1);
        TAP_EXPECT_EQ(ibmc_mcast_relay_child_ack(&r, &o, 3, 9), -1);
        TAP_EXPECT_EQ(r.bogus_acks, 3);
        /* a child that falls behind holds the aggregate back and is named */
        ibmc_mcast_relay_init(&r, 10, 7, W, P, ring, ring_root, leaf_acked, child_acked, 2, agg_sent, owed);
        ibmc_mcast_relay_leaf_ack(&r, 8, 5);
        ibmc_mcast_relay_leaf_ack(&r, 9, 5);
        ibmc_mcast_relay_child_ack(&r, &p, 3, 2);
        TAP_EXPECT_EQ(ibmc_mcast_relay_aggregate(&r, &p, 5, 0, lag, 4, &nlag), 2);
        TAP_EXPECT_EQ(nlag, 1);
        TAP_EXPECT_EQ(lag[0], 3);
        TAP_EXPECT_EQ(ibmc_mcast_relay_child_ack(&r, &p, 3, 1), 0);     /* only forward */
        TAP_EXPECT_EQ(r.child_acks, 1);
        /* under another root 7 is a leaf: it heads nobody, the aggregate is its own */
        ibmc_mcast_plan_t q = ibmc_mcast_plan(10, 3, 6);
        TAP_EXPECT_EQ(ibmc_mcast_plan_head(&q, 7), 6);
        ibmc_mcast_relay_leaf_ack(&r, 8, 9);
        TAP_EXPECT_EQ(ibmc_mcast_relay_aggregate(&r, &q, 5, 0, lag, 4, &nlag), 5);
    }

    TAP_TEST("aggregates go up every half ack_every positions, or when owed and caught up") {
        ibmc_mcast_relay_init(&r, 10, 7, W, P, ring, ring_root, leaf_acked, child_acked, 2, agg_sent, owed);
        TAP_EXPECT(!ibmc_mcast_relay_due(&r, 4, 1, 9, 4));
        TAP_EXPECT(ibmc_mcast_relay_due(&r, 4, 2, 9, 4));
        ibmc_mcast_relay_sent(&r, 4, 4, 9);
        TAP_EXPECT(!ibmc_mcast_relay_due(&r, 4, 4, 9, 4));  /* not moved */
        TAP_EXPECT(!ibmc_mcast_relay_due(&r, 4, 5, 9, 4));
        owed[4] = 1;
        /* owed, but the members below are behind next: it waits for them */
        TAP_EXPECT(!ibmc_mcast_relay_due(&r, 4, 5, 9, 4));
        TAP_EXPECT(ibmc_mcast_relay_due(&r, 4, 6, 9, 4));   /* moved by half of ack_every */
        TAP_EXPECT(ibmc_mcast_relay_due(&r, 4, 5, 5, 4));   /* caught up */
        TAP_EXPECT(ibmc_mcast_relay_due(&r, 4, 5, 9, 0));   /* no period: owed goes at once */
        ibmc_mcast_relay_sent(&r, 4, 6, 9);
        TAP_EXPECT(owed[4]);    /* 6 does not cover 9: still owed */
        TAP_EXPECT(!ibmc_mcast_relay_due(&r, 4, 6, 9, 4));
        ibmc_mcast_relay_sent(&r, 4, 9, 9);
        TAP_EXPECT(!owed[4]);
        TAP_EXPECT(!ibmc_mcast_relay_due(&r, 4, 10, 10, 0));
        /* each root separately */
        TAP_EXPECT(ibmc_mcast_relay_due(&r, 0, 4, 9, 4));
    }

    return tap_done();
}
