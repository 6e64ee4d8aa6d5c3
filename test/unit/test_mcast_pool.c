/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Host unit tests of ibmc_mcast_pool.c: which group a communicator's
 * channel takes, agreed from every member's offer; that communicators
 * broadcasting at once (MPI_Comm_split's siblings, a process grid's rows
 * and columns) get groups of their own while the pool has room; and the
 * bound on groups held, and on join/leave cycles, however many
 * communicators come and go. */

#include <stdlib.h>
#include <string.h>
#include "ibmc_mcast_pool.h"
#include "tap.h"
#include "rng.h"

/* A job of np processes (world ranks 0..np-1), each with its pool. */
typedef struct {
    int np;
    ibmc_mcast_pool_t *p;
    long swaps, joins;
    long kinds[IBMC_MCAST_POOL_NONE + 1];
    int disagreed;
} job_t;

/* A live communicator: its members (world ranks, ascending) and each
 * member's pool entry; addr is its group, -1 when it fell back. */
typedef struct {
    int n;
    int *members;
    int *entry;
    long addr;
} comm_t;

static void job_init(job_t * j, int np, int cap)
{
    memset(j, 0, sizeof(*j));
    j->np = np;
    j->p = calloc((size_t) np, sizeof(*j->p));
    for (int i = 0; i < np; i++)
        ibmc_mcast_pool_init(&j->p[i], cap);
}

static void job_free(job_t * j)
{
    free(j->p);
}

/* What the netmod's setup does at every member: offers gathered in rank
 * order, each member picks from them, places the group and joins it. */
static void comm_setup(job_t * j, comm_t * c)
{
    ibmc_mcast_pool_offer_t *o = calloc((size_t) c->n, sizeof(*o));
    uint32_t leader = (uint32_t) c->members[0];
    for (int r = 0; r < c->n; r++) {
        ibmc_mcast_pool_offer(&j->p[c->members[r]], leader, &o[r]);
        if ((uint32_t) c->members[r] < leader)
            leader = (uint32_t) c->members[r];
    }
    c->entry = calloc((size_t) c->n, sizeof(int));
    c->addr = -1;
    int k0 = -2;
    for (int r = 0; r < c->n; r++) {
        ibmc_mcast_pool_kind_t kind;
        int full;
        int k = ibmc_mcast_pool_pick(o, c->n, &kind, &full);
        if (k0 != -2 && k != k0)
            j->disagreed++;
        k0 = k;
        if (r == 0)
            j->kinds[kind]++;
        c->entry[r] = -1;
        if (k < 0)
            continue;
        uint32_t addr = ibmc_mcast_pool_addr(leader, k);
        ibmc_mcast_pool_t *p = &j->p[c->members[r]];
        int leave, e = ibmc_mcast_pool_place(p, addr, &leave);
        if (e < 0) {
            j->disagreed++;
            continue;
        }
        if (leave) {
            ibmc_mcast_pool_left(p, e);
            j->swaps++;
        }
        if (!p->e[e].joined)
            j->joins++;
        ibmc_mcast_pool_joined(p, e, addr);
        ibmc_mcast_pool_ref(p, e);
        c->entry[r] = e;
        c->addr = addr;
    }
    free(o);
}

static void comm_free(job_t * j, comm_t * c)
{
    for (int r = 0; r < c->n; r++)
        if (c->entry && c->entry[r] >= 0)
            ibmc_mcast_pool_unref(&j->p[c->members[r]], c->entry[r]);
    free(c->members);
    free(c->entry);
    memset(c, 0, sizeof(*c));
}

/* members first, first + stride, ... (n of them) */
static void comm_strided(comm_t * c, int first, int stride, int n)
{
    memset(c, 0, sizeof(*c));
    c->n = n;
    c->members = calloc((size_t) n, sizeof(int));
    for (int i = 0; i < n; i++)
        c->members[i] = first + i * stride;
}

/* Do the live communicators a and b have a member in common? */
static int overlap(const comm_t * a, const comm_t * b)
{
    for (int i = 0; i < a->n; i++)
        for (int k = 0; k < b->n; k++)
            if (a->members[i] == b->members[k])
                return 1;
    return 0;
}

/* Every process holds at most cap groups, and each entry's refs are the
 * live channels on it. */
static int held_ok(const job_t * j)
{
    for (int i = 0; i < j->np; i++)
        if (ibmc_mcast_pool_held(&j->p[i]) > j->p[i].cap)
            return 0;
    return 1;
}

int main(void)
{
    TAP_TEST("MPI_Comm_split's disjoint halves, each taking its lowest free entry, get "
             "different groups") {
        job_t j;
        job_init(&j, 8, 16);
        comm_t world, half[2];
        comm_strided(&world, 0, 1, 8);
        comm_setup(&j, &world);
        comm_strided(&half[0], 0, 1, 4);
        comm_strided(&half[1], 4, 1, 4);
        comm_setup(&j, &half[0]);
        comm_setup(&j, &half[1]);
        TAP_EXPECT(half[0].addr >= 0 && half[1].addr >= 0);
        TAP_EXPECT(half[0].addr != half[1].addr);
        TAP_EXPECT(half[0].addr != world.addr && half[1].addr != world.addr);
        /* both took their members' lowest free entry: the entry is the same */
        TAP_EXPECT_EQ(half[0].entry[1], half[1].entry[1]);
        TAP_EXPECT_EQ(j.kinds[IBMC_MCAST_POOL_SHARED] + j.kinds[IBMC_MCAST_POOL_SWAP], 0);
        TAP_EXPECT_EQ(j.disagreed, 0);
        comm_free(&j, &world);
        comm_free(&j, &half[0]);
        comm_free(&j, &half[1]);
        job_free(&j);
    }

    TAP_TEST("a 32 x 32 process grid: world, 32 rows and 32 columns alive at once, each on a "
             "group of its own, 3 groups a process") {
        enum { R = 32 };
        job_t j;
        job_init(&j, R * R, 16);
        comm_t c[1 + 2 * R];
        comm_strided(&c[0], 0, 1, R * R);
        for (int i = 0; i < R; i++) {
            comm_strided(&c[1 + i], i * R, 1, R);       /* row i */
            comm_strided(&c[1 + R + i], i, R, R);       /* column i */
        }
        for (int i = 0; i < 1 + 2 * R; i++)
            comm_setup(&j, &c[i]);
        int same = 0, fell_back = 0;
        for (int a = 0; a < 1 + 2 * R; a++) {
            fell_back += c[a].addr < 0;
            for (int b = a + 1; b < 1 + 2 * R; b++)
                same += c[a].addr == c[b].addr;
        }
        TAP_EXPECT_EQ(same, 0);
        TAP_EXPECT_EQ(fell_back, 0);
        TAP_EXPECT_EQ(j.disagreed, 0);
        TAP_EXPECT_EQ(j.swaps, 0);
        int three = 1;
        for (int i = 0; i < R * R; i++)
            three &= ibmc_mcast_pool_held(&j.p[i]) == 3;
        TAP_EXPECT(three);
        /* the grid made again, step after step: the same groups, no join */
        long joins = j.joins;
        for (int step = 0; step < 5; step++)
            for (int i = 1; i < 1 + 2 * R; i++) {
                int first = c[i].members[0], stride = c[i].members[1] - first;
                comm_free(&j, &c[i]);
                comm_strided(&c[i], first, stride, R);
                comm_setup(&j, &c[i]);
            }
        TAP_EXPECT_EQ(j.joins, joins);
        TAP_EXPECT_EQ(j.swaps, 0);
        for (int i = 0; i < 1 + 2 * R; i++)
            comm_free(&j, &c[i]);
        job_free(&j);
    }

    TAP_TEST("a full pool: the same leader's busy group is shared; another leader's "
             "communicator falls back, naming the member without room") {
        job_t j;
        job_init(&j, 4, 1);
        comm_t a, b, d;
        comm_strided(&a, 0, 1, 2);      /* {0,1} */
        comm_setup(&j, &a);
        comm_strided(&b, 0, 2, 2);      /* {0,2}: leader 0, whose only group is busy */
        comm_setup(&j, &b);
        TAP_EXPECT_EQ(b.addr, a.addr);
        TAP_EXPECT_EQ(j.kinds[IBMC_MCAST_POOL_SHARED], 1);
        comm_strided(&d, 1, 1, 3);      /* {1,2,3}: leader 1; 1 and 2 are full */
        ibmc_mcast_pool_offer_t o[3];
        for (int r = 0; r < 3; r++)
            ibmc_mcast_pool_offer(&j.p[d.members[r]], 1, &o[r]);
        ibmc_mcast_pool_kind_t kind;
        int full;
        TAP_EXPECT_EQ(ibmc_mcast_pool_pick(o, 3, &kind, &full), -1);
        TAP_EXPECT_EQ(kind, IBMC_MCAST_POOL_NONE);
        TAP_EXPECT_EQ(full, 0);
        TAP_EXPECT_EQ(j.disagreed, 0);
        comm_free(&j, &a);
        comm_free(&j, &b);
        free(d.members);
        job_free(&j);
    }

    TAP_TEST("swap: a new leader's communicator takes the idle group unused longest, and "
             "members agree whatever the order of their offers") {
        ibmc_mcast_pool_t p;
        ibmc_mcast_pool_init(&p, 2);
        int leave, e;
        ibmc_mcast_pool_joined(&p, 0, ibmc_mcast_pool_addr(5, 0));
        ibmc_mcast_pool_joined(&p, 1, ibmc_mcast_pool_addr(6, 0));
        ibmc_mcast_pool_ref(&p, 1);
        ibmc_mcast_pool_ref(&p, 0);
        ibmc_mcast_pool_unref(&p, 1);   /* idle first */
        ibmc_mcast_pool_unref(&p, 0);
        e = ibmc_mcast_pool_place(&p, ibmc_mcast_pool_addr(7, 0), &leave);
        TAP_EXPECT_EQ(e, 1);
        TAP_EXPECT_EQ(leave, 1);
        e = ibmc_mcast_pool_place(&p, ibmc_mcast_pool_addr(5, 0), &leave);
        TAP_EXPECT_EQ(e, 0);
        TAP_EXPECT_EQ(leave, 0);
        ibmc_mcast_pool_offer_t o[3] = {
            {.idle = 0x1,.held = 0x1,.room = 1,.cap = 2},
            {.idle = 0,.held = 0,.room = 1,.cap = 2},
            {.idle = 0x2,.held = 0x3,.room = 1,.cap = 2}
        }, r[3] = { o[2], o[0], o[1] };
        ibmc_mcast_pool_kind_t k1, k2;
        int f1, f2;
        int a = ibmc_mcast_pool_pick(o, 3, &k1, &f1), b = ibmc_mcast_pool_pick(r, 3, &k2, &f2);
        TAP_EXPECT_EQ(a, b);
        TAP_EXPECT_EQ(k1, k2);
        /* k = 0 is busy at the third: the first leaves its idle k = 0 for k = 1 */
        TAP_EXPECT_EQ(k1, IBMC_MCAST_POOL_SWAP);
        TAP_EXPECT_EQ(a, 1);
        /* a member whose cap is smaller bounds the pick */
        ibmc_mcast_pool_offer_t s[2] = {
            {.idle = 0x1,.held = 0x1,.room = 2,.cap = 4},
            {.idle = 0,.held = 0x1,.room = 0,.cap = 1}
        };
        TAP_EXPECT_EQ(ibmc_mcast_pool_pick(s, 2, &k1, &f1), 0);
        TAP_EXPECT_EQ(k1, IBMC_MCAST_POOL_SHARED);
    }

    TAP_TEST("refs: the last unref makes an entry idle; strays are ignored; cap is clamped") {
        ibmc_mcast_pool_t p;
        ibmc_mcast_pool_init(&p, 3);
        ibmc_mcast_pool_offer_t o;
        ibmc_mcast_pool_offer(&p, 0, &o);
        TAP_EXPECT(o.room == 2 && o.held == 0 && o.idle == 0 && o.cap == 3);
        ibmc_mcast_pool_joined(&p, 1, ibmc_mcast_pool_addr(0, 2));
        ibmc_mcast_pool_ref(&p, 1);
        ibmc_mcast_pool_ref(&p, 1);
        ibmc_mcast_pool_offer(&p, 0, &o);
        TAP_EXPECT(o.held == 0x4 && o.idle == 0);
        ibmc_mcast_pool_unref(&p, 1);
        ibmc_mcast_pool_offer(&p, 0, &o);
        TAP_EXPECT(o.idle == 0);
        ibmc_mcast_pool_unref(&p, 1);
        ibmc_mcast_pool_offer(&p, 0, &o);
        TAP_EXPECT(o.idle == 0x4);
        /* another leader sees none of it as its own */
        ibmc_mcast_pool_offer(&p, 1, &o);
        TAP_EXPECT(o.held == 0 && o.room == 2);
        ibmc_mcast_pool_unref(&p, 1);   /* one too many */
        ibmc_mcast_pool_ref(&p, 3);     /* past the cap */
        ibmc_mcast_pool_ref(&p, -1);
        ibmc_mcast_pool_ref(&p, 0);     /* not joined */
        TAP_EXPECT(p.e[1].refs == 0 && p.e[0].refs == 0);
        TAP_EXPECT_EQ(ibmc_mcast_pool_held(&p), 1);
        ibmc_mcast_pool_init(&p, 0);
        TAP_EXPECT_EQ(p.cap, 1);
        ibmc_mcast_pool_init(&p, 1000);
        TAP_EXPECT_EQ(p.cap, IBMC_MCAST_POOL_MAX);
    }

    TAP_TEST("10,000 communicators duplicated and split from the same processes (bcast_churn's "
             "pattern), some kept: no group ever left, never more than cap held") {
        enum { NP = 4, CAP = 2, LIVE = 4 };
        job_t j;
        job_init(&j, NP, CAP);
        comm_t live[LIVE];
        memset(live, 0, sizeof(live));
        rng_t rng;
        rng_seed(&rng, 49);
        int bad = 0, fell_back = 0;
        for (int i = 0; i < 10000; i++) {
            int s = (int) rng_below(&rng, LIVE);
            if (live[s].n)
                comm_free(&j, &live[s]);
            comm_strided(&live[s], 0, 1, NP);
            comm_setup(&j, &live[s]);
            fell_back += live[s].addr < 0;
            bad += !held_ok(&j);
        }
        TAP_EXPECT_EQ(bad, 0);
        TAP_EXPECT_EQ(fell_back, 0);
        TAP_EXPECT_EQ(j.disagreed, 0);
        TAP_EXPECT_EQ(j.swaps, 0);
        TAP_EXPECT_EQ(j.joins, NP * CAP);
        tap_diag("%ld idle, %ld fresh, %ld shared picks", j.kinds[IBMC_MCAST_POOL_IDLE],
                 j.kinds[IBMC_MCAST_POOL_FRESH], j.kinds[IBMC_MCAST_POOL_SHARED]);
        for (int s = 0; s < LIVE; s++)
            if (live[s].n)
                comm_free(&j, &live[s]);
        job_free(&j);
    }

    TAP_TEST("10,000 communicators of random members over 6 processes: members always agree, "
             "never more than cap groups, siblings alive at once never share while the pool "
             "has room") {
        enum { NP = 6, CAP = 8, LIVE = 6 };
        job_t j;
        job_init(&j, NP, CAP);
        comm_t live[LIVE];
        memset(live, 0, sizeof(live));
        rng_t rng;
        rng_seed(&rng, 2026);
        int bad = 0, disjoint_shared = 0;
        for (int i = 0; i < 10000; i++) {
            int s = (int) rng_below(&rng, LIVE);
            if (live[s].n)
                comm_free(&j, &live[s]);
            int mask = (int) rng_below(&rng, (1u << NP) - 1) + 1;
            comm_t *c = &live[s];
            c->members = calloc(NP, sizeof(int));
            for (int p = 0; p < NP; p++)
                if (mask >> p & 1)
                    c->members[c->n++] = p;
            comm_setup(&j, c);
            bad += !held_ok(&j);
            for (int t = 0; t < LIVE; t++)
                if (t != s && live[t].n && c->addr >= 0 && live[t].addr == c->addr &&
                    !overlap(c, &live[t]))
                    disjoint_shared++;
        }
        TAP_EXPECT_EQ(bad, 0);
        TAP_EXPECT_EQ(j.disagreed, 0);
        /* disjoint communicators have different leaders, so different groups */
        TAP_EXPECT_EQ(disjoint_shared, 0);
        /* 6 leaders x 8 groups > 8 a process: the pool swapped, and said so */
        TAP_EXPECT(j.swaps > 0);
        tap_diag("%ld idle, %ld fresh, %ld shared, %ld swap, %ld none; %ld joins, %ld swaps",
                 j.kinds[IBMC_MCAST_POOL_IDLE], j.kinds[IBMC_MCAST_POOL_FRESH],
                 j.kinds[IBMC_MCAST_POOL_SHARED], j.kinds[IBMC_MCAST_POOL_SWAP],
                 j.kinds[IBMC_MCAST_POOL_NONE], j.joins, j.swaps);
        for (int s = 0; s < LIVE; s++)
            if (live[s].n)
                comm_free(&j, &live[s]);
        job_free(&j);
    }

    return tap_done();
}
