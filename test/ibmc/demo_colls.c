/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The collectives part of maint/demo: MPI_Bcast and MPI_Allgather on the
 * same communicator with whatever algorithms MPIR_CVAR_BCAST_INTRA_ALGORITHM
 * and MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM choose, every byte checked, the
 * time per call at each size, and ibmc's counters that show which path
 * the data took.  maint/demo runs it twice in one VM boot, with ibmc_mcast
 * and ibmc_node_rd and with MPICH's default, and prints the ratios.
 *
 *   demo_colls [--expect-ibmc] [ITERS]   (default 200 calls a size)
 * --expect-ibmc: fail unless the broadcasts went by multicast and the
 * allgathers through the node segments, with no fallback.
 * Prints "demo-colls: ..." lines from rank 0; exit status 0 only if every
 * byte arrived intact (and, with --expect-ibmc, the paths were taken). */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpit_pvar.h"

static int errors;

static unsigned long long pv(const char *name)
{
    int found;
    return mpit_pvar_read(name, &found);
}

static unsigned char byte_of(int it, int src, size_t i)
{
    return (unsigned char) (it * 13 + src * 31 + i * 7 + (i >> 8) + 1);
}

/* ITERS broadcasts of len bytes from rank 0 (every byte checked); the
 * seconds they took, measured at rank 0 and closed by a barrier */
static double bcasts(unsigned char *buf, size_t len, int iters, int rank)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        for (size_t i = 0; rank == 0 && i < len; i++)
            buf[i] = byte_of(it, 0, i);
        MPI_Bcast(buf, (int) len, MPI_BYTE, 0, MPI_COMM_WORLD);
        for (size_t i = 0; rank != 0 && i < len; i++)
            if (buf[i] != byte_of(it, 0, i)) {
                if (errors++ < 3)
                    fprintf(stderr, "demo-colls: FAIL: rank %d, broadcast of %zu B, byte %zu\n",
                            rank, len, i);
                break;
            }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t;
}

/* ITERS allgathers of len bytes a rank, every byte checked */
static double allgathers(unsigned char *mine, unsigned char *all, size_t len, int iters,
                         int rank, int size)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        for (size_t i = 0; i < len; i++)
            mine[i] = byte_of(it, rank, i);
        MPI_Allgather(mine, (int) len, MPI_BYTE, all, (int) len, MPI_BYTE, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            for (size_t i = 0; i < len; i++)
                if (all[r * len + i] != byte_of(it, r, i)) {
                    if (errors++ < 3)
                        fprintf(stderr, "demo-colls: FAIL: rank %d, allgather of %zu B, block of "
                                "rank %d, byte %zu\n", rank, len, r, i);
                    r = size;
                    break;
                }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t;
}

int main(int argc, char **argv)
{
    int rank, size, provided, expect = 0, iters = 200;
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--expect-ibmc"))
            expect = 1;
        else
            iters = atoi(argv[a]);
    }
    static const size_t bsizes[] = { 1, 1024, 16384 }, asizes[] = { 16, 1024, 8192 };
    const int nb = 3, na = 3;
    size_t maxa = 8192;
    unsigned char *buf = malloc(16384), *mine = malloc(maxa), *all = malloc(maxa * size);
    double tb[3], ta[3];

    /* warm-up: set-up (the multicast channel, the node segments) is not in
     * the figures */
    bcasts(buf, 1, 1, rank);
    allgathers(mine, all, 16, 1, rank, size);

    static const char *names[] = { "ibmc_mcast_bcasts", "ibmc_mcast_pkts_sent",
        "ibmc_mcast_post_calls", "ibmc_mcast_naks_sent", "ibmc_mcast_retransmits",
        "ibmc_mcast_fallbacks", "ibmc_node_rd_allgathers", "ibmc_node_rd_writes",
        "ibmc_node_rd_flag_writes", "ibmc_node_rd_fallbacks"
    };
    enum { NV = 10 };
    unsigned long long c0[NV], d[NV], tot[NV];
    for (int i = 0; i < NV; i++)
        c0[i] = pv(names[i]);
    for (int s = 0; s < nb; s++)
        tb[s] = bcasts(buf, bsizes[s], iters, rank);
    for (int s = 0; s < na; s++)
        ta[s] = allgathers(mine, all, asizes[s], iters, rank, size);
    for (int i = 0; i < NV; i++)
        d[i] = pv(names[i]) - c0[i];
    MPI_Reduce(d, tot, NV, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int leaders = 0, bad = 0, is_leader = d[0] > 0;   /* a node's receiver counts them */
    MPI_Reduce(&is_leader, &leaders, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&errors, &bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int calls = nb * iters, acalls = na * iters;
        for (int s = 0; s < nb; s++)
            printf("demo-colls: time MPI_Bcast %zu B %.2f us\n", bsizes[s], tb[s] / iters * 1e6);
        for (int s = 0; s < na; s++)
            printf("demo-colls: time MPI_Allgather %zu B %.2f us\n", asizes[s],
                   ta[s] / iters * 1e6);
        printf("demo-colls: MPI_Bcast: %llu of %d broadcasts by multicast on %d node leaders, "
               "%.2f packets and %.2f ibv_post_send calls per broadcast at the root, %llu NAKs, "
               "%llu retransmissions, %llu fallbacks\n", leaders ? tot[0] / leaders : 0, calls,
               leaders, (double) tot[1] / calls, (double) tot[2] / calls, tot[3], tot[4],
               tot[5]);
        printf("demo-colls: MPI_Allgather: %llu of %d calls through node segments, %.2f data "
               "and %.2f flag RDMA writes between nodes per call, %llu fallbacks\n",
               tot[6] / size, acalls, (double) tot[7] / acalls, (double) tot[8] / acalls,
               tot[9] / size);
        int used = tot[0] > 0 && tot[2] > 0 && tot[5] == 0 && tot[6] > 0 && tot[7] > 0 &&
            tot[9] == 0;
        if (bad || (expect && !used))
            printf("demo-colls: FAIL: %d wrong blocks; multicast broadcasts %llu, node-segment "
                   "allgathers %llu, fallbacks %llu and %llu\n", bad, tot[0], tot[6], tot[5],
                   tot[9]);
        else
            printf("demo-colls: all bytes verified: %d broadcasts and %d allgathers on %d ranks\n",
                   calls, acalls, size);
        bad = bad || (expect && !used);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(buf);
    free(mine);
    free(all);
    MPI_T_finalize();
    MPI_Finalize();
    return bad ? 1 : 0;
}
