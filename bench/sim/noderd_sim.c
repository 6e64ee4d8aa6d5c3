/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* noderd_sim: ibmc_node_rd's MPI_Allgather on N simulated nodes of P
 * processes each (SimGrid 3.32, C API), driven by the netmod's own plan
 * (src/mpid/ch4/netmod/ibmc/ibmc_noderd.c: the segment layout and the
 * rounds of recursive doubling across nodes, seed 001 §4).  It carries out
 * what ibmc_node_allgather.c does with that plan, step for step:
 *
 *   0. every process copies its block into its node's segment
 *      (copy-us + size / copy-bw), then waits for the marks of its node's
 *      other processes (a node barrier);
 *   1. per round, the node's leader posts one RDMA write of the round's
 *      blocks into the partner node's segment, its flag behind it on the
 *      same queue pair (one transfer of bytes + 8 over the network model,
 *      post-us of CPU); a round of at least --share-min bytes is written
 *      by up to 8 processes of the node, a part each, as
 *      MPIR_CVAR_IBMC_NODE_RD_SHARE_MIN makes the netmod do;
 *   2. every process copies out what the previous round brought while the
 *      current one is on the wire (--no-overlap: all at the end), one copy
 *      per run of consecutive ranks, skipping its own block, then waits for
 *      the current round's flag;
 *   3. the leader waits for its writes to complete before the call ends.
 *
 * The writes cross SimGrid's network model between the nodes' hosts of the
 * platform given by --platform (the one `ibmc_sim --platform-out` writes,
 * which SMPI runs the point-to-point baseline on, smpi_allgather.c).  The
 * receiving node spends no CPU on a write: a receiver actor per node
 * stands for its HCA and raises the round's flag for the node's processes.
 *
 * Every node checks the plan while it runs, at any node count: a node
 * writes only blocks it holds, a write matches what its partner expects
 * in that round, no block reaches a node twice, and every node holds every
 * block at the end of every call.
 *
 * Every figure printed is SIMULATED. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>
#include "ibmc_noderd.h"

/* as IBMC_NODESEG_SHARERS in ibmc_nodeseg.h */
#define SHARERS_MAX 8

static struct {
    const char *platform;
    int nodes, ppn, iters, overlap;
    long size;
    double copy_bw, copy_us, post_us;
    long share_min;
    int fault_node;             /* -1, or a node whose first write is one block off */
} opt = {
    .nodes = 0,.ppn = 1,.iters = 10,.overlap = 1,.size = 8,
    .copy_bw = 10e9,.copy_us = 0.1,.post_us = 0.2,.share_min = 8192,.fault_node = -1
};

/* One write (or a sharer's part of one) of round `round`, from node
 * `from`, of the blocks in `ranges` (what the writer's plan says it
 * sends). */
typedef struct {
    int round, from, nranges;
    ibmc_noderd_range_t ranges[2];
} write_t;

typedef struct {
    int id, nrounds;
    ibmc_noderd_round_t rounds[IBMC_NODERD_MAX_ROUNDS];
    int arrived[IBMC_NODERD_MAX_ROUNDS];
    sg_sem_t flag[IBMC_NODERD_MAX_ROUNDS];     /* released ppn times per call */
    sg_bar_t marks;
    sg_mailbox_t mb;
    uint8_t *held;              /* a bit per segment position */
    int err;
} node_t;

static struct {
    ibmc_noderd_layout_t lay;
    node_t *node;
    sg_bar_t all;
    double *t_start, *t_end;
    unsigned long long writes, bytes_written, copies, bytes_copied;
    int fail;
} g;

static void usage(void)
{
    fprintf(stderr, "usage: noderd_sim --platform FILE --nodes N [--ppn P] [--size BYTES] "
            "[--iters K]\n"
            "       [--copy-bw B/s] [--copy-us us] [--post-us us] [--share-min BYTES] "
            "[--no-overlap]\n       [--fault-node V]\n");
    exit(2);
}

static int held(const node_t * n, int pos)
{
    return n->held[pos >> 3] >> (pos & 7) & 1;
}

static void fail_at(node_t * n, const char *what, int round)
{
    if (!n->err)
        fprintf(stderr, "noderd_sim: node %d, round %d: %s\n", n->id, round, what);
    n->err = 1;
    g.fail = 1;
}

static long range_bytes(const ibmc_noderd_range_t * r, int n)
{
    long b = 0;
    for (int i = 0; i < n; i++)
        b += (long) r[i].count * opt.size;
    return b;
}

/* as MPIDI_IBMC_nodeseg_sharers */
static int sharers(int node, long bytes)
{
    int n = g.lay.node_count[node];
    if (!opt.share_min || bytes < opt.share_min)
        return 1;
    return n < SHARERS_MAX ? n : SHARERS_MAX;
}

static void cpu(double us)
{
    if (us > 0)
        sg_actor_sleep_for(us * 1e-6);
}

/* Process `rank`'s copies of positions [first, first + count) out of the
 * segment, as copy_out() in ibmc_node_allgather.c: one copy per run of
 * consecutive ranks, its own block skipped. */
static void copy_out(int rank, ibmc_noderd_range_t r)
{
    int end = r.first + r.count;
    for (int pos = r.first; pos < end;) {
        int first = g.lay.pos_rank[pos];
        int run = ibmc_noderd_run(&g.lay, pos, end - pos);
        if (rank >= first && rank < first + run)
            run = rank - first;
        if (run == 0) {
            pos++;
            continue;
        }
        cpu(opt.copy_us + (double) run * opt.size / opt.copy_bw * 1e6);
        g.copies++;
        g.bytes_copied += (unsigned long long) run * opt.size;
        pos += run;
    }
}

/* The HCA of a node: writes land in the segment without its CPUs; once
 * every part of a round is in, the round's flag is up for the node's
 * processes. */
static void receiver_main(int argc, char *argv[])
{
    (void) argc;
    node_t *me = &g.node[atoi(argv[1])];
    sg_mailbox_set_receiver(sg_mailbox_get_name(me->mb));
    for (;;) {
        write_t *w = sg_mailbox_get(me->mb);
        int r = w->round;
        const ibmc_noderd_round_t *rd = &me->rounds[r];
        if (r < 0 || r >= me->nrounds || rd->from != w->from) {
            fail_at(me, "a write from a node that is not this round's partner", r);
            free(w);
            continue;
        }
        int same = w->nranges == rd->nrecv;
        for (int i = 0; same && i < rd->nrecv; i++)
            same = w->ranges[i].first == rd->recv[i].first &&
                w->ranges[i].count == rd->recv[i].count;
        if (!same)
            fail_at(me, "a write of other blocks than the round expects", r);
        if (++me->arrived[r] == sharers(w->from, range_bytes(rd->recv, rd->nrecv))) {
            me->arrived[r] = 0;
            for (int i = 0; i < rd->nrecv; i++)
                for (int p = rd->recv[i].first; p < rd->recv[i].first + rd->recv[i].count; p++) {
                    if (held(me, p))
                        fail_at(me, "a block reached the node twice", r);
                    me->held[p >> 3] |= (uint8_t) (1u << (p & 7));
                }
            for (int i = 0; i < opt.ppn; i++)
                sg_sem_release(me->flag[r]);
        }
        free(w);
    }
}

static void process_main(int argc, char *argv[])
{
    (void) argc;
    int rank = atoi(argv[1]);
    int v = rank / opt.ppn, local = rank % opt.ppn;
    node_t *me = &g.node[v];
    sg_comm_t posted[IBMC_NODERD_MAX_ROUNDS];   /* at most one write a round */
    ibmc_noderd_range_t pending[1 + 2 * IBMC_NODERD_MAX_ROUNDS];

    for (int k = 0; k < opt.iters; k++) {
        sg_barrier_wait(g.all);
        double t0 = simgrid_get_clock();
        if (rank == 0)
            g.t_start[k] = t0;
        /* 0: the block in, then every local mark */
        cpu(opt.copy_us + (double) opt.size / opt.copy_bw * 1e6);
        if (local == 0)
            for (int i = 0; i < g.lay.node_count[v]; i++) {
                int p = g.lay.node_first[v] + i;
                me->held[p >> 3] |= (uint8_t) (1u << (p & 7));
            }
        sg_barrier_wait(me->marks);

        int npending = 0, nposted = 0, first_send = 0;
        while (first_send < me->nrounds - 1 && me->rounds[first_send].to < 0)
            first_send++;
        pending[npending].first = g.lay.node_first[v];
        pending[npending++].count = g.lay.node_count[v];
        for (int r = 0; r < me->nrounds; r++) {
            const ibmc_noderd_round_t *rd = &me->rounds[r];
            long bytes = range_bytes(rd->send, rd->nsend);
            int nk = rd->to >= 0 ? sharers(v, bytes) : 0;
            if (local < nk) {
                ibmc_noderd_range_t send[2] = { rd->send[0], rd->send[1] };
                /* --fault-node: shows that the checks catch a wrong plan */
                if (v == opt.fault_node && r == first_send)
                    send[0].first = (send[0].first + 1) % g.lay.nranks;
                for (int i = 0; i < rd->nsend; i++)
                    for (int p = send[i].first; p < send[i].first + send[i].count; p++)
                        if (p >= g.lay.nranks || !held(me, p))
                            fail_at(me, "a write of a block the node does not hold", r);
                /* sharer `local`'s part of the bytes, then its flag */
                long part = bytes / nk + (local < bytes % nk);
                write_t *w = malloc(sizeof(*w));
                if (!w) {
                    fprintf(stderr, "noderd_sim: out of memory\n");
                    exit(2);
                }
                w->round = r;
                w->from = v;
                w->nranges = rd->nsend;
                memcpy(w->ranges, send, sizeof(send));
                /* one RDMA write per range, on one queue pair: one transfer */
                cpu(opt.post_us * rd->nsend);
                posted[nposted++] = sg_mailbox_put_async(g.node[rd->to].mb, w, part + 8);
                g.writes += (unsigned long long) rd->nsend;
                g.bytes_written += (unsigned long long) part;
            }
            if (opt.overlap) {
                for (int i = 0; i < npending; i++)
                    copy_out(rank, pending[i]);
                npending = 0;
            }
            if (rd->from >= 0) {
                sg_sem_acquire(me->flag[r]);
                for (int i = 0; i < rd->nrecv; i++)
                    pending[npending++] = rd->recv[i];
            }
        }
        for (int i = 0; i < npending; i++)
            copy_out(rank, pending[i]);
        sg_comm_wait_all(posted, (size_t) nposted);
        double t1 = simgrid_get_clock();
        if (t1 > g.t_end[k])
            g.t_end[k] = t1;
        /* every process of the node is past this call's flags: check the
         * node holds every block, and clear for the next call */
        sg_barrier_wait(me->marks);
        if (local == 0) {
            for (int p = 0; p < g.lay.nranks; p++)
                if (!held(me, p)) {
                    fail_at(me, "a block missing at the end of the call", me->nrounds);
                    break;
                }
            memset(me->held, 0, ((size_t) g.lay.nranks + 7) / 8);
        }
    }
}

static double num(const char *s)
{
    char *end;
    double d = strtod(s, &end);
    if (end == s || *end)
        usage();
    return d;
}

int main(int argc, char *argv[])
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--no-overlap")) {
            opt.overlap = 0;
            continue;
        }
        if (i + 1 >= argc)
            usage();
        const char *v = argv[++i];
        if (!strcmp(a, "--platform"))
            opt.platform = v;
        else if (!strcmp(a, "--nodes"))
            opt.nodes = (int) num(v);
        else if (!strcmp(a, "--ppn"))
            opt.ppn = (int) num(v);
        else if (!strcmp(a, "--size"))
            opt.size = (long) num(v);
        else if (!strcmp(a, "--iters"))
            opt.iters = (int) num(v);
        else if (!strcmp(a, "--copy-bw"))
            opt.copy_bw = num(v);
        else if (!strcmp(a, "--copy-us"))
            opt.copy_us = num(v);
        else if (!strcmp(a, "--post-us"))
            opt.post_us = num(v);
        else if (!strcmp(a, "--share-min"))
            opt.share_min = (long) num(v);
        else if (!strcmp(a, "--fault-node"))
            opt.fault_node = (int) num(v);
        else
            usage();
    }
    if (!opt.platform || opt.nodes < 1 || opt.ppn < 1 || opt.size < 1 || opt.iters < 1 ||
        opt.copy_bw <= 0 || opt.copy_us < 0 || opt.post_us < 0 || opt.share_min < 0)
        usage();

    char *sg_argv[] = { argv[0], "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
        "--cfg=contexts/stack-size:128", "--cfg=contexts/guard-size:0",
        "--log=root.thresh:warning", NULL
    };
    /* no guard page per actor stack: tens of thousands of actors would
     * exceed the kernel's mappings per process (vm.max_map_count) */
    int sg_argc = 6;
    simgrid_init(&sg_argc, sg_argv);
    simgrid_load_platform(opt.platform);

    /* block placement: rank r on node r / ppn */
    int nranks = opt.nodes * opt.ppn;
    int *node_of_rank = malloc((size_t) nranks * sizeof(int));
    g.lay.node_first = malloc((size_t) opt.nodes * sizeof(int));
    g.lay.node_count = malloc((size_t) opt.nodes * sizeof(int));
    g.lay.pos_rank = malloc((size_t) nranks * sizeof(int));
    g.lay.rank_pos = malloc((size_t) nranks * sizeof(int));
    g.node = calloc((size_t) opt.nodes, sizeof(node_t));
    g.t_start = calloc((size_t) opt.iters, sizeof(double));
    g.t_end = calloc((size_t) opt.iters, sizeof(double));
    if (!node_of_rank || !g.lay.node_first || !g.lay.node_count || !g.lay.pos_rank ||
        !g.lay.rank_pos || !g.node || !g.t_start || !g.t_end) {
        fprintf(stderr, "noderd_sim: out of memory\n");
        return 2;
    }
    for (int r = 0; r < nranks; r++)
        node_of_rank[r] = r / opt.ppn;
    if (ibmc_noderd_layout(&g.lay, nranks, node_of_rank, opt.nodes)) {
        fprintf(stderr, "noderd_sim: the plan refused the layout\n");
        return 2;
    }
    g.all = sg_barrier_init((unsigned) nranks);
    int nrounds = 0;
    for (int v = 0; v < opt.nodes; v++) {
        node_t *n = &g.node[v];
        char name[32];
        snprintf(name, sizeof(name), "n%d", v);
        if (!sg_host_by_name(name)) {
            fprintf(stderr, "noderd_sim: the platform has no host %s\n", name);
            return 2;
        }
        n->id = v;
        n->nrounds = ibmc_noderd_rounds(&g.lay, v, n->rounds);
        if (v > 0 && n->nrounds != nrounds) {
            fprintf(stderr, "noderd_sim: nodes disagree on the number of rounds\n");
            return 2;
        }
        nrounds = n->nrounds;
        for (int r = 0; r < n->nrounds; r++)
            n->flag[r] = sg_sem_init(0);
        n->marks = sg_barrier_init((unsigned) opt.ppn);
        n->mb = sg_mailbox_by_name(name);
        n->held = calloc(((size_t) nranks + 7) / 8, 1);
        if (!n->held) {
            fprintf(stderr, "noderd_sim: out of memory\n");
            return 2;
        }
    }
    for (int v = 0; v < opt.nodes; v++) {
        char name[32], id[16];
        snprintf(name, sizeof(name), "n%d", v);
        snprintf(id, sizeof(id), "%d", v);
        char *rv[] = { "hca", id, NULL };
        sg_actor_daemonize(sg_actor_create("hca", sg_host_by_name(name), receiver_main, 2, rv));
    }
    for (int r = 0; r < nranks; r++) {
        char name[32], id[16];
        snprintf(name, sizeof(name), "n%d", r / opt.ppn);
        snprintf(id, sizeof(id), "%d", r);
        char *av[] = { "rank", id, NULL };
        sg_actor_create("rank", sg_host_by_name(name), process_main, 2, av);
    }
    simgrid_run();

    double sum = 0, lo = 0, hi = 0;
    for (int k = 0; k < opt.iters; k++) {
        double l = g.t_end[k] - g.t_start[k];
        sum += l;
        if (k == 0 || l < lo)
            lo = l;
        if (l > hi)
            hi = l;
    }
    printf("SIMULATED noderd_sim nodes=%d ppn=%d size=%ld iters=%d rounds=%d overlap=%d "
           "mean_lat_us=%.3f min_lat_us=%.3f max_lat_us=%.3f writes_per_call=%.2f "
           "bytes_written_per_call=%.0f copies_per_call=%.2f bytes_copied_per_call=%.0f "
           "result=%s\n", opt.nodes, opt.ppn, opt.size, opt.iters, nrounds, opt.overlap,
           sum / opt.iters * 1e6, lo * 1e6, hi * 1e6, (double) g.writes / opt.iters,
           (double) g.bytes_written / opt.iters, (double) g.copies / opt.iters,
           (double) g.bytes_copied / opt.iters, g.fail ? "FAIL" : "ok");
    return g.fail ? 1 : 0;
}
