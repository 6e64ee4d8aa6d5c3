/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Host unit tests of ibmc_noderd.c, the plan of the ibmc_node_rd
 * MPI_Allgather.  Every plan is run as a simulation: nodes hold blocks, a
 * round's writes are taken from what the writer holds before the round, and
 * each process copies out its node's own blocks and every range its node
 * receives.  For every node count from 1 to 33, with equal and unequal
 * processes per node and with ranks placed in blocks, round-robin and at
 * random, every block must reach every node and every process exactly once,
 * a node may only send blocks it holds, and the writer's and the receiver's
 * views of each round must agree. */

#include <stdlib.h>
#include <string.h>
#include "ibmc_noderd.h"
#include "tap.h"
#include "rng.h"

enum { BLOCKS, ROUND_ROBIN, RANDOM };

typedef struct {
    int nranks, nnodes;
    int *node_of_rank;
    int node_first[64], node_count[64];
    int *pos_rank, *rank_pos;
    ibmc_noderd_layout_t lay;
} plan_t;

/* ppn[k] processes on node k, placed by `how`; node indices renumbered by
 * lowest rank as the netmod does */
static int make_plan(plan_t * p, int nnodes, const int *ppn, int how, rng_t * seed)
{
    int n = 0;
    for (int k = 0; k < nnodes; k++)
        n += ppn[k];
    int *id = malloc(sizeof(int) * n), *left = malloc(sizeof(int) * nnodes);
    int *scratch = malloc(sizeof(int) * n);
    p->node_of_rank = malloc(sizeof(int) * n);
    p->pos_rank = malloc(sizeof(int) * n);
    p->rank_pos = malloc(sizeof(int) * n);
    memcpy(left, ppn, sizeof(int) * nnodes);
    int r = 0;
    if (how == BLOCKS) {
        for (int k = 0; k < nnodes; k++)
            for (int i = 0; i < ppn[k]; i++)
                id[r++] = 1000 + k;
    } else if (how == ROUND_ROBIN) {
        while (r < n)
            for (int k = 0; k < nnodes; k++)
                if (left[k]-- > 0)
                    id[r++] = 1000 + k;
    } else {
        while (r < n) {
            int k = (int) (rng_next(seed) % (uint64_t) nnodes);
            if (left[k]-- > 0)
                id[r++] = 7000 - 3 * k; /* ids need not be ordered */
        }
    }
    p->nranks = n;
    p->nnodes = ibmc_noderd_number_nodes(n, id, p->node_of_rank, scratch);
    p->lay.node_first = p->node_first;
    p->lay.node_count = p->node_count;
    p->lay.pos_rank = p->pos_rank;
    p->lay.rank_pos = p->rank_pos;
    int rc = ibmc_noderd_layout(&p->lay, n, p->node_of_rank, p->nnodes);
    free(id);
    free(left);
    free(scratch);
    return rc;
}

static void free_plan(plan_t * p)
{
    free(p->node_of_rank);
    free(p->pos_rank);
    free(p->rank_pos);
}

static int log2_floor(int x)
{
    int l = 0;
    while ((2 << l) <= x)
        l++;
    return l;
}

/* Runs the plan; returns the number of problems found (0 = correct) and
 * counts the writes in *writes. */
static int simulate(const plan_t * p, int *writes)
{
    int N = p->nnodes, n = p->nranks, bad = 0;
    ibmc_noderd_round_t (*rounds)[IBMC_NODERD_MAX_ROUNDS] = malloc(sizeof(*rounds) * N);
    int nrounds = -1;
    for (int k = 0; k < N; k++) {
        int nr = ibmc_noderd_rounds(&p->lay, k, rounds[k]);
        if (nrounds >= 0 && nr != nrounds)
            bad++;
        nrounds = nr;
    }
    /* held[k][pos]: times node k got block pos; got[r][pos]: times process
     * r copied it out */
    int *held = calloc((size_t) N * n, sizeof(int)), *got = calloc((size_t) n * n, sizeof(int));
    int *next = malloc(sizeof(int) * N * n);
    for (int r = 0; r < n; r++) {
        int k = p->node_of_rank[r];
        held[k * n + p->rank_pos[r]]++;
    }
    /* each process copies out its own node's blocks after the arrival barrier */
    for (int r = 0; r < n; r++) {
        int k = p->node_of_rank[r];
        for (int pos = p->node_first[k]; pos < p->node_first[k] + p->node_count[k]; pos++)
            got[r * n + pos]++;
    }
    *writes = 0;
    for (int rd = 0; rd < nrounds; rd++) {
        memcpy(next, held, sizeof(int) * N * n);
        for (int k = 0; k < N; k++) {
            const ibmc_noderd_round_t *me = &rounds[k][rd];
            if (me->to >= 0) {
                const ibmc_noderd_round_t *them = &rounds[me->to][rd];
                /* the receiver expects exactly these ranges from this node */
                if (them->from != k || them->nrecv != me->nsend)
                    bad++;
                for (int i = 0; i < me->nsend && i < them->nrecv; i++)
                    if (them->recv[i].first != me->send[i].first ||
                        them->recv[i].count != me->send[i].count)
                        bad++;
                for (int i = 0; i < me->nsend; i++) {
                    (*writes)++;
                    if (me->send[i].count <= 0)
                        bad++;
                    for (int pos = me->send[i].first;
                         pos < me->send[i].first + me->send[i].count; pos++) {
                        if (!held[k * n + pos])
                            bad++;      /* sends what it does not hold */
                        next[me->to * n + pos]++;
                    }
                }
            } else if (me->nsend) {
                bad++;
            }
            if (me->from < 0 && me->nrecv)
                bad++;
            for (int i = 0; i < me->nrecv; i++)
                for (int pos = me->recv[i].first; pos < me->recv[i].first + me->recv[i].count;
                     pos++)
                    for (int r = 0; r < n; r++)
                        if (p->node_of_rank[r] == k)
                            got[r * n + pos]++;
        }
        memcpy(held, next, sizeof(int) * N * n);
    }
    for (int i = 0; i < N * n; i++)
        if (held[i] != 1)
            bad++;
    for (int i = 0; i < n * n; i++)
        if (got[i] != 1)
            bad++;
    free(rounds);
    free(held);
    free(got);
    free(next);
    return bad;
}

/* ---- several calls, interleaved at random ----
 *
 * Every process of every node is a small machine that runs the calls of
 * ibmc_node_allgather.c step by step: copy its block into the current half,
 * mark, wait for the node's marks, then (leader) post each round's writes
 * into the partner's half and its flag, or (others) wait for the round's
 * flag, and copy out what each round brought.  A scheduler picks a runnable
 * process at random.  Writes land at once (the most eager a network can
 * be), so a write into a slot that a process of that node has yet to copy
 * out for an older call, or a copy-out that finds another call's data, is
 * the reuse hazard the two halves and the sequence numbers must prevent. */

typedef struct {
    int call, readers;          /* whose data a slot holds, and copy-outs still due */
} slot_t;

typedef struct {
    const plan_t *p;
    int calls, hazards;
    int halves;                 /* 2 as in the segments; 1 for the negative control */
    slot_t *slots;              /* [node][half][pos] */
    int *flag;                  /* [node][round]: the latest call flagged */
    int *mark;                  /* [rank] */
    ibmc_noderd_round_t (*rounds)[IBMC_NODERD_MAX_ROUNDS];
    int nrounds;
} world_t;

typedef struct {
    int call, pc, round;        /* pc: 0 copy-in, 1 wait marks, 2 rounds, 3 done with call */
    int step;                   /* within a round: 0 post, 1 wait flag */
    int pending[1 + 2 * IBMC_NODERD_MAX_ROUNDS][2], npending;
} proc_t;

static slot_t *slot(world_t * w, int node, int call, int pos)
{
    return &w->slots[((size_t) node * 2 + call % w->halves) * w->p->nranks + pos];
}

static void land(world_t * w, int node, int call, int pos)
{
    slot_t *s = slot(w, node, call, pos);
    if (s->readers > 0)
        w->hazards++;   /* overwrites data a process has not copied out */
    s->call = call;
    s->readers = w->p->node_count[node];
}

static void copy_out(world_t * w, int node, int call, int first, int count)
{
    for (int pos = first; pos < first + count; pos++) {
        slot_t *s = slot(w, node, call, pos);
        if (s->call != call || s->readers <= 0)
            w->hazards++;       /* reads another call's data */
        else
            s->readers--;
    }
}

/* One step of rank r if it can take one; returns whether it did. */
static int step(world_t * w, proc_t * pr, int r)
{
    const plan_t *p = w->p;
    int node = p->node_of_rank[r], c = pr->call;
    int leader = p->pos_rank[p->node_first[node]] == r;
    if (c > w->calls)
        return 0;
    switch (pr->pc) {
        case 0:
            land(w, node, c, p->rank_pos[r]);
            w->mark[r] = c;
            pr->npending = 0;
            pr->pc = 1;
            return 1;
        case 1:
            for (int q = 0; q < p->nranks; q++)
                if (p->node_of_rank[q] == node && w->mark[q] < c)
                    return 0;
            pr->pending[0][0] = p->node_first[node];
            pr->pending[0][1] = p->node_count[node];
            pr->npending = 1;
            pr->pc = 2;
            pr->round = 0;
            pr->step = 0;
            return 1;
        case 2:
            if (pr->round == w->nrounds) {
                for (int i = 0; i < pr->npending; i++)
                    copy_out(w, node, c, pr->pending[i][0], pr->pending[i][1]);
                pr->call++;
                pr->pc = 0;
                return 1;
            }
            const ibmc_noderd_round_t *rd = &w->rounds[node][pr->round];
            if (pr->step == 0) {
                if (leader && rd->to >= 0) {
                    for (int i = 0; i < rd->nsend; i++)
                        for (int pos = rd->send[i].first;
                             pos < rd->send[i].first + rd->send[i].count; pos++)
                            land(w, rd->to, c, pos);
                    int *f = &w->flag[rd->to * IBMC_NODERD_MAX_ROUNDS + pr->round];
                    *f = c > *f ? c : *f;
                }
                for (int i = 0; i < pr->npending; i++)
                    copy_out(w, node, c, pr->pending[i][0], pr->pending[i][1]);
                pr->npending = 0;
                pr->step = 1;
                return 1;
            }
            if (rd->from >= 0) {
                if (w->flag[node * IBMC_NODERD_MAX_ROUNDS + pr->round] < c)
                    return 0;
                for (int i = 0; i < rd->nrecv; i++) {
                    pr->pending[pr->npending][0] = rd->recv[i].first;
                    pr->pending[pr->npending++][1] = rd->recv[i].count;
                }
            }
            pr->round++;
            pr->step = 0;
            return 1;
    }
    return 0;
}

/* Runs `calls` calls under a random schedule with `halves` halves per
 * segment; returns the hazards found, or -1 on a deadlock. */
static int interleave_halves(const plan_t * p, int calls, rng_t * rng, int halves)
{
    world_t w = {.p = p,.calls = calls,.halves = halves };
    int N = p->nnodes, n = p->nranks;
    w.slots = calloc((size_t) N * 2 * n, sizeof(slot_t));
    w.flag = calloc((size_t) N * IBMC_NODERD_MAX_ROUNDS, sizeof(int));
    w.mark = calloc((size_t) n, sizeof(int));
    w.rounds = malloc(sizeof(*w.rounds) * N);
    for (int k = 0; k < N; k++)
        w.nrounds = ibmc_noderd_rounds(&p->lay, k, w.rounds[k]);
    proc_t *pr = calloc((size_t) n, sizeof(proc_t));
    for (int r = 0; r < n; r++)
        pr[r].call = 1;
    int result = 0;
    for (;;) {
        int done = 1;
        for (int r = 0; r < n; r++)
            done &= pr[r].call > calls;
        if (done)
            break;
        /* a random runnable process: try from a random start */
        int start = (int) rng_below(rng, (uint64_t) n), moved = 0;
        for (int i = 0; i < n && !moved; i++)
            moved = step(&w, &pr[(start + i) % n], (start + i) % n);
        if (!moved) {
            result = -1;
            break;
        }
    }
    if (result == 0)
        result = w.hazards;
    free(w.slots);
    free(w.flag);
    free(w.mark);
    free(w.rounds);
    free(pr);
    return result;
}

static int interleave(const plan_t * p, int calls, rng_t * rng)
{
    return interleave_halves(p, calls, rng, 2);
}

static int interleave_one_half(const plan_t * p, int calls, rng_t * rng)
{
    return interleave_halves(p, calls, rng, 1);
}

int main(void)
{
    rng_t seed;
    rng_seed(&seed, 0x5eed);

    TAP_TEST("layout: positions are a permutation, each node's ranks contiguous and ascending") {
        int ppn[5] = { 3, 1, 4, 1, 5 };
        plan_t p;
        TAP_EXPECT_EQ(make_plan(&p, 5, ppn, ROUND_ROBIN, &seed), 0);
        TAP_EXPECT_EQ(p.nnodes, 5);
        TAP_EXPECT_EQ(p.lay.core, 4);
        for (int r = 0; r < p.nranks; r++)
            TAP_EXPECT_EQ(p.pos_rank[p.rank_pos[r]], r);
        for (int k = 0; k < p.nnodes; k++)
            for (int pos = p.node_first[k] + 1; pos < p.node_first[k] + p.node_count[k]; pos++) {
                TAP_EXPECT_EQ(p.node_of_rank[p.pos_rank[pos]], k);
                TAP_EXPECT(p.pos_rank[pos] > p.pos_rank[pos - 1]);
            }
        /* pairs: core node 0, its partner node 4, then core node 1 */
        TAP_EXPECT_EQ(p.node_first[0], 0);
        TAP_EXPECT_EQ(p.node_first[4], 3);
        TAP_EXPECT_EQ(p.node_first[1], 8);
        free_plan(&p);
    }

    TAP_TEST("node ids are numbered by lowest rank; a bad numbering is refused") {
        int ids[6] = { 9, 4, 9, 7, 4, 7 }, of[6], scratch[6];
        TAP_EXPECT_EQ(ibmc_noderd_number_nodes(6, ids, of, scratch), 3);
        int want[6] = { 0, 1, 0, 2, 1, 2 };
        TAP_EXPECT(memcmp(of, want, sizeof(want)) == 0);
        int first[3], count[3], pr[6], rp[6];
        ibmc_noderd_layout_t lay = {.node_first = first,.node_count = count,.pos_rank = pr,
            .rank_pos = rp
        };
        int skip[3] = { 0, 2, 1 };      /* node 2 before node 1 */
        TAP_EXPECT_EQ(ibmc_noderd_layout(&lay, 3, skip, 3), -1);
        int hole[3] = { 0, 0, 2 };      /* node 1 missing */
        TAP_EXPECT_EQ(ibmc_noderd_layout(&lay, 3, hole, 3), -1);
        TAP_EXPECT_EQ(ibmc_noderd_layout(&lay, 6, of, 3), 0);
    }

    TAP_TEST("one node: no rounds") {
        int ppn[1] = { 4 }, w;
        plan_t p;
        make_plan(&p, 1, ppn, BLOCKS, &seed);
        ibmc_noderd_round_t rounds[IBMC_NODERD_MAX_ROUNDS];
        TAP_EXPECT_EQ(ibmc_noderd_rounds(&p.lay, 0, rounds), 0);
        TAP_EXPECT_EQ(simulate(&p, &w), 0);
        TAP_EXPECT_EQ(w, 0);
        free_plan(&p);
    }

    TAP_TEST("1 to 33 nodes, 1..3 per node, three placements: every block once everywhere") {
        for (int N = 1; N <= 33; N++) {
            for (int how = BLOCKS; how <= RANDOM; how++) {
                for (int shape = 0; shape < 3; shape++) {
                    int ppn[33];
                    for (int k = 0; k < N; k++)
                        ppn[k] = shape == 0 ? 1 : shape == 1 ? 3 :
                            1 + (int) (rng_next(&seed) % 4);
                    plan_t p;
                    int w;
                    TAP_EXPECT_EQ(make_plan(&p, N, ppn, how, &seed), 0);
                    TAP_EXPECT_EQ(p.nnodes, N);
                    int bad = simulate(&p, &w);
                    if (bad)
                        tap_diag("N=%d placement %d shape %d: %d problems", N, how, shape, bad);
                    TAP_EXPECT_EQ(bad, 0);
                    free_plan(&p);
                }
            }
        }
    }

    TAP_TEST("a power of two of nodes: nodes x log2(nodes) writes, independent of processes") {
        for (int N = 2; N <= 32; N *= 2) {
            for (int shape = 0; shape < 2; shape++) {
                int ppn[32];
                for (int k = 0; k < N; k++)
                    ppn[k] = shape ? 1 + (int) (rng_next(&seed) % 8) : 1;
                plan_t p;
                int w;
                make_plan(&p, N, ppn, ROUND_ROBIN, &seed);
                TAP_EXPECT_EQ(simulate(&p, &w), 0);
                TAP_EXPECT_EQ(w, N * log2_floor(N));
                ibmc_noderd_round_t rounds[IBMC_NODERD_MAX_ROUNDS];
                TAP_EXPECT_EQ(ibmc_noderd_rounds(&p.lay, 0, rounds), log2_floor(N));
                free_plan(&p);
            }
        }
    }

    TAP_TEST("otherwise: two rounds more, and P log2(P) + 3 (N - P) writes") {
        for (int N = 3; N <= 33; N++) {
            int P = 1 << log2_floor(N);
            if (P == N)
                continue;
            int ppn[33];
            for (int k = 0; k < N; k++)
                ppn[k] = 2;
            plan_t p;
            int w;
            make_plan(&p, N, ppn, BLOCKS, &seed);
            TAP_EXPECT_EQ(simulate(&p, &w), 0);
            ibmc_noderd_round_t rounds[IBMC_NODERD_MAX_ROUNDS];
            TAP_EXPECT_EQ(ibmc_noderd_rounds(&p.lay, 0, rounds), log2_floor(N) + 2);
            /* doublings among the core, one fold-in write per outside node,
             * and a fold-out of two writes each: an outside node's blocks
             * are never at an end of the segment (its core partner's come
             * first, and the last pair has no outside node since N < 2P) */
            int extra = N - P;
            TAP_EXPECT_EQ(w, P * log2_floor(N) + 3 * extra);
            free_plan(&p);
        }
    }

    TAP_TEST("consecutive calls under random interleavings: no slot reused too early") {
        for (int N = 1; N <= 12; N++) {
            for (int trial = 0; trial < 40; trial++) {
                int ppn[12];
                for (int k = 0; k < N; k++)
                    ppn[k] = 1 + (int) rng_below(&seed, 3);
                plan_t p;
                make_plan(&p, N, ppn, (int) rng_below(&seed, 3), &seed);
                int h = interleave(&p, 6, &seed);
                if (h)
                    tap_diag("N=%d trial %d: %s %d", N, trial, h < 0 ? "deadlock" : "hazards", h);
                TAP_EXPECT_EQ(h, 0);
                free_plan(&p);
            }
        }
    }

    TAP_TEST("the interleaving check finds a half reused every call") {
        /* the same machines with one half only: the hazard must show */
        int ppn[4] = { 2, 1, 2, 1 }, found = 0;
        plan_t p;
        make_plan(&p, 4, ppn, BLOCKS, &seed);
        for (int trial = 0; trial < 200 && !found; trial++)
            found = interleave_one_half(&p, 6, &seed) > 0;
        TAP_EXPECT(found);
        free_plan(&p);
    }

    TAP_TEST("a run: positions whose ranks are consecutive") {
        int ppn[2] = { 3, 3 };
        plan_t p;
        make_plan(&p, 2, ppn, BLOCKS, &seed);
        TAP_EXPECT_EQ(ibmc_noderd_run(&p.lay, 0, 6), 6);
        free_plan(&p);
        make_plan(&p, 2, ppn, ROUND_ROBIN, &seed);
        TAP_EXPECT_EQ(ibmc_noderd_run(&p.lay, 0, 6), 1);
        TAP_EXPECT_EQ(ibmc_noderd_run(&p.lay, 2, 1), 1);
        free_plan(&p);
    }

    return tap_done();
}
