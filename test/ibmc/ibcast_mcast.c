/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* MPI_Ibcast and MPI_Bcast_init over the multicast channel.  Run with
 * MPIR_CVAR_IBCAST_INTRA_ALGORITHM=ibmc_mcast and
 * MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast on several pretend nodes.
 *
 * Rounds of up to INFLIGHT MPI_Ibcast posted at once on MPI_COMM_WORLD,
 * from rotating roots and of varied sizes, with a blocking MPI_Bcast
 * posted among them every few, waited for with MPI_Waitall in reverse
 * order; then a persistent broadcast (MPI_Bcast_init) started and waited
 * for STARTS times, the root's data new each time, and freed.  Every byte
 * is checked at every rank.  The counters must show that every broadcast
 * went over multicast: ibmc_mcast_bcasts_posted grows by one per
 * MPI_Ibcast and per MPI_Start at each node leader (every rank with one
 * rank a node), and no broadcast fell back.
 *
 * --stride K (K > 1) makes every broadcast non-contiguous: its bytes are
 * every K-th byte of the buffer (an MPI_Type_vector), and the bytes between
 * must come back untouched.  The channel moves packed bytes, so the
 * counters must still show every broadcast by multicast.
 *
 * The persistent broadcast is received in place at every node leader
 * that receives it by multicast (MPIR_CVAR_IBMC_MCAST_RECV_IN_PLACE), and
 * by copies from the point where a loss or a packet that came early
 * interrupts it.  --expect-in-place makes every start come in order: each
 * such leader starts, turns progress until ibmc_mcast_place_armed says its
 * receives are posted, and only then lets the root start (a barrier on
 * another communicator); each must then have received every fragment in
 * place: ibmc_mcast_copies unchanged, ibmc_mcast_in_place grown by the
 * same whole number of fragments at each start, every one matched by the
 * main queue's twin dropped (ibmc_mcast_shadowed), no receive taken back.
 * --expect-copies: none was received in place (the CVAR off, or the
 * buffer refused: then ibmc_mcast_place_refused grew by one at each such
 * leader).
 *
 * usage: ibcast_mcast [--inflight N] [--rounds R] [--starts S] [--stride K]
 *                     [--expect-in-place | --expect-copies] [MAXBYTES] */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "mpit_pvar.h"

static unsigned char byte_of(long k, size_t i)
{
    return (unsigned char) (k * 151 + i * 13 + 5);
}

static unsigned long long pvar(const char *name, int *fails)
{
    int found;
    unsigned long long v = mpit_pvar_read(name, &found);
    if (!found) {
        printf("ibcast_mcast: FAIL: no MPI_T pvar %s\n", name);
        (*fails)++;
    }
    return v;
}

#define GAP 0xee                /* the bytes a strided broadcast must not touch */

/* broadcast k's len bytes, every stride-th byte of buf (its data at the
 * root, zeros elsewhere), the gaps GAP */
static void fill(unsigned char *buf, size_t len, int stride, long k, int is_root)
{
    memset(buf, GAP, len * (size_t) stride);
    for (size_t i = 0; i < len; i++)
        buf[i * (size_t) stride] = is_root ? byte_of(k, i) : 0;
}

static int check(const unsigned char *buf, size_t len, int stride, long k, int rank)
{
    for (size_t i = 0; i < len * (size_t) stride; i++) {
        unsigned want = i % (size_t) stride ? GAP : byte_of(k, i / (size_t) stride);
        if (buf[i] != want) {
            printf("ibcast_mcast: FAIL: rank %d, broadcast %ld, buffer byte %zu of %zu "
                   "(stride %d): %u, not %u\n", rank, k, i, len * (size_t) stride, stride,
                   buf[i], want);
            return 1;
        }
    }
    return 0;
}

/* len bytes, every stride-th of the buffer */
static MPI_Datatype type_of(size_t len, int stride)
{
    MPI_Datatype t;
    if (stride == 1) {
        MPI_Type_contiguous((int) len, MPI_BYTE, &t);
    } else {
        MPI_Type_vector((int) len, 1, stride, MPI_BYTE, &t);
    }
    MPI_Type_commit(&t);
    return t;
}

int main(int argc, char **argv)
{
    int rank, size, provided, fails = 0, inflight = 4, rounds = 40, starts = 200, stride = 1;
    int expect_in_place = 0, expect_copies = 0;
    size_t maxlen = 20000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--inflight") && i + 1 < argc)
            inflight = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--starts") && i + 1 < argc)
            starts = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--stride") && i + 1 < argc)
            stride = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--expect-in-place"))
            expect_in_place = 1;
        else if (!strcmp(argv[i], "--expect-copies"))
            expect_copies = 1;
        else
            maxlen = strtoul(argv[i], NULL, 0);
    }
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (inflight < 1 || maxlen < 1 || stride < 1) {
        if (!rank)
            printf("usage: ibcast_mcast [--inflight N] [--rounds R] [--starts S] [--stride K] "
                   "[--expect-in-place | --expect-copies] [MAXBYTES]\n");
        MPI_Finalize();
        return 2;
    }
    /* node leaders: the lowest rank of each pretend node receives by
     * multicast; MPI_Comm_split_type tells who shares a node */
    MPI_Comm node;
    int node_rank;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    int leader = node_rank == 0;

    unsigned char **bufs = malloc(sizeof(*bufs) * (size_t) inflight);
    size_t *lens = malloc(sizeof(*lens) * (size_t) inflight);
    long *ids = malloc(sizeof(*ids) * (size_t) inflight);
    MPI_Request *reqs = malloc(sizeof(*reqs) * (size_t) inflight);
    MPI_Datatype *types = malloc(sizeof(*types) * (size_t) inflight);
    for (int j = 0; j < inflight; j++)
        bufs[j] = malloc(maxlen * (size_t) stride);

    unsigned long long posted0 = pvar("ibmc_mcast_bcasts_posted", &fails);
    unsigned long long bcasts0 = pvar("ibmc_mcast_bcasts", &fails);
    unsigned long long fb0 = pvar("ibmc_mcast_fallbacks", &fails);
    long k = 0, nonblocking = 0, blocking = 0;
    for (int r = 0; r < rounds && !fails; r++) {
        int n = 1 + r % inflight;
        for (int j = 0; j < n; j++, k++) {
            int root = (int) (k % size);
            size_t len = 1 + (size_t) ((k * 7919) % maxlen);
            lens[j] = len;
            ids[j] = k;
            fill(bufs[j], len, stride, k, rank == root);
            MPI_Datatype t = types[j] = type_of(len, stride);
            if (j % 3 == 2) {
                /* a blocking one among the posted: it waits behind them */
                MPI_Bcast(bufs[j], 1, t, root, MPI_COMM_WORLD);
                reqs[j] = MPI_REQUEST_NULL;
                blocking++;
            } else {
                MPI_Ibcast(bufs[j], 1, t, root, MPI_COMM_WORLD, &reqs[j]);
                nonblocking++;
            }
        }
        for (int j = n - 1; j >= 0; j--)
            MPI_Wait(&reqs[j], MPI_STATUS_IGNORE);
        for (int j = 0; j < n; j++)
            MPI_Type_free(&types[j]);
        for (int j = 0; j < n; j++)
            fails += check(bufs[j], lens[j], stride, ids[j], rank);
    }

    /* persistent: the same request, the root's data new at every start */
    size_t plen = maxlen;
    unsigned char *pbuf = malloc(plen * (size_t) stride);
    MPI_Request preq;
    int proot = size - 1;
    MPI_Datatype pt = type_of(plen, stride);
    /* a node leader that receives the persistent broadcast by multicast:
     * one on another node than its root's */
    MPI_Group wg, ng;
    int proot_here;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(node, &ng);
    MPI_Group_translate_ranks(wg, 1, &proot, ng, &proot_here);
    MPI_Group_free(&wg);
    MPI_Group_free(&ng);
    int mcast_receiver = leader && proot_here == MPI_UNDEFINED;
    MPI_Comm sync;
    MPI_Comm_dup(MPI_COMM_WORLD, &sync);
    MPI_Bcast_init(pbuf, 1, pt, proot, MPI_COMM_WORLD, MPI_INFO_NULL, &preq);
    unsigned long long p_copies0 = pvar("ibmc_mcast_copies", &fails);
    unsigned long long p_in0 = pvar("ibmc_mcast_in_place", &fails);
    unsigned long long p_armed0 = pvar("ibmc_mcast_place_armed", &fails);
    unsigned long long p_ended0 = pvar("ibmc_mcast_place_ended", &fails);
    unsigned long long p_shadow0 = pvar("ibmc_mcast_shadowed", &fails);
    unsigned long long p_refused0 = pvar("ibmc_mcast_place_refused", &fails);
    unsigned long long per_start = 0;
    for (int s = 0; s < starts && !fails; s++) {
        long id = 100000 + s;
        fill(pbuf, plen, stride, id, rank == proot);
        if (expect_in_place && rank == proot)
            MPI_Barrier(sync);
        MPI_Start(&preq);
        if (expect_in_place && mcast_receiver) {
            /* this start's receives posted before the root may send */
            unsigned long long armed = pvar("ibmc_mcast_place_armed", &fails);
            time_t t0 = time(NULL);
            int flag = 0;
            while (!fails && !flag && armed == p_armed0 + (unsigned long long) s) {
                if (time(NULL) - t0 > 20) {
                    printf("ibcast_mcast: FAIL: rank %d: start %d: no receive posted in place "
                           "after 20 s\n", rank, s);
                    fails++;
                }
                MPI_Test(&preq, &flag, MPI_STATUS_IGNORE);
                armed = pvar("ibmc_mcast_place_armed", &fails);
            }
            if (flag) {
                printf("ibcast_mcast: FAIL: rank %d: start %d done before its root started\n",
                       rank, s);
                fails++;
            }
        }
        if (expect_in_place && rank != proot)
            MPI_Barrier(sync);
        MPI_Wait(&preq, MPI_STATUS_IGNORE);
        fails += check(pbuf, plen, stride, id, rank);
        if (expect_in_place && mcast_receiver && s == 0)
            per_start = pvar("ibmc_mcast_in_place", &fails) - p_in0;
    }
    MPI_Request_free(&preq);
    unsigned long long p_copies = pvar("ibmc_mcast_copies", &fails) - p_copies0;
    unsigned long long p_in = pvar("ibmc_mcast_in_place", &fails) - p_in0;
    unsigned long long p_armed = pvar("ibmc_mcast_place_armed", &fails) - p_armed0;
    unsigned long long p_ended = pvar("ibmc_mcast_place_ended", &fails) - p_ended0;
    unsigned long long p_shadow = pvar("ibmc_mcast_shadowed", &fails) - p_shadow0;
    unsigned long long p_refused = pvar("ibmc_mcast_place_refused", &fails) - p_refused0;
    if (expect_in_place && mcast_receiver &&
        (p_copies || !per_start || p_in != per_start * (unsigned long long) starts ||
         p_armed != (unsigned long long) starts || p_ended || p_shadow != p_in)) {
        printf("ibcast_mcast: FAIL: rank %d: %d starts received with %llu copies, %llu "
               "fragments in place (%llu at the first start), %llu starts armed, %llu ended "
               "early, %llu main-queue twins dropped; not 0 copies, the same number in place "
               "at every start, every start armed, none ended early and one twin a fragment\n",
               rank, starts, p_copies, p_in, per_start, p_armed, p_ended, p_shadow);
        fails++;
    }
    if (expect_copies && mcast_receiver && (p_in || p_armed || !p_copies)) {
        printf("ibcast_mcast: FAIL: rank %d: %llu fragments in place in %llu starts, %llu "
               "copies; expected every fragment copied\n", rank, p_in, p_armed, p_copies);
        fails++;
    }
    MPI_Comm_free(&sync);
    MPI_Type_free(&pt);
    MPI_Barrier(MPI_COMM_WORLD);

    unsigned long long posted = pvar("ibmc_mcast_bcasts_posted", &fails) - posted0;
    unsigned long long bcasts = pvar("ibmc_mcast_bcasts", &fails) - bcasts0;
    unsigned long long fb = pvar("ibmc_mcast_fallbacks", &fails) - fb0;
    unsigned long long want_posted = leader ? (unsigned long long) (nonblocking + starts) : 0;
    unsigned long long want_all = leader ? want_posted + (unsigned long long) blocking : 0;
    if (posted != want_posted || bcasts != want_all || fb) {
        printf("ibcast_mcast: FAIL: rank %d%s: %llu posted and %llu broadcasts in all by "
               "multicast, %llu fallbacks; not %llu, %llu and 0\n", rank,
               leader ? " (a node leader)" : "", posted, bcasts, fb, want_posted, want_all);
        fails++;
    }
    unsigned long long sums[5] = { posted, bcasts, p_in, p_copies, p_refused }, tot[5];
    MPI_Reduce(sums, tot, 5, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int all_fails;
    MPI_Allreduce(&fails, &all_fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!rank) {
        printf("ibcast_mcast: %ld MPI_Ibcast (up to %d in flight) and %ld MPI_Bcast interleaved, "
               "%d starts of one MPI_Bcast_init, up to %zu B%s: %llu posted and %llu broadcasts "
               "in all by multicast, summed over ranks\n", nonblocking, inflight, blocking, starts,
               maxlen, stride > 1 ? ", strided" : "", tot[0], tot[1]);
        printf("ibcast_mcast: the persistent broadcasts: %llu fragments received in place, "
               "%llu copies, %llu requests refused a receiver, summed over ranks\n", tot[2],
               tot[3], tot[4]);
        if (!all_fails)
            printf("ibcast_mcast: all checks passed\n");
    }
    for (int j = 0; j < inflight; j++)
        free(bufs[j]);
    free(bufs);
    free(lens);
    free(ids);
    free(reqs);
    free(types);
    free(pbuf);
    MPI_Comm_free(&node);
    MPI_T_finalize();
    MPI_Finalize();
    return all_fails ? 1 : 0;
}
