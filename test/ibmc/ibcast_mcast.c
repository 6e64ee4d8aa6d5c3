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
 * usage: ibcast_mcast [--inflight N] [--rounds R] [--starts S] [MAXBYTES] */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int check(const unsigned char *buf, size_t len, long k, int rank)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != byte_of(k, i)) {
            printf("ibcast_mcast: FAIL: rank %d, broadcast %ld, byte %zu of %zu: %u, not %u\n",
                   rank, k, i, len, buf[i], byte_of(k, i));
            return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size, provided, fails = 0, inflight = 4, rounds = 40, starts = 200;
    size_t maxlen = 20000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--inflight") && i + 1 < argc)
            inflight = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--starts") && i + 1 < argc)
            starts = atoi(argv[++i]);
        else
            maxlen = strtoul(argv[i], NULL, 0);
    }
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (inflight < 1 || maxlen < 1) {
        if (!rank)
            printf("usage: ibcast_mcast [--inflight N] [--rounds R] [--starts S] [MAXBYTES]\n");
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
    for (int j = 0; j < inflight; j++)
        bufs[j] = malloc(maxlen);

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
            for (size_t i = 0; i < len; i++)
                bufs[j][i] = rank == root ? byte_of(k, i) : 0;
            if (j % 3 == 2) {
                /* a blocking one among the posted: it waits behind them */
                MPI_Bcast(bufs[j], (int) len, MPI_BYTE, root, MPI_COMM_WORLD);
                reqs[j] = MPI_REQUEST_NULL;
                blocking++;
            } else {
                MPI_Ibcast(bufs[j], (int) len, MPI_BYTE, root, MPI_COMM_WORLD, &reqs[j]);
                nonblocking++;
            }
        }
        for (int j = n - 1; j >= 0; j--)
            MPI_Wait(&reqs[j], MPI_STATUS_IGNORE);
        for (int j = 0; j < n; j++)
            fails += check(bufs[j], lens[j], ids[j], rank);
    }

    /* persistent: the same request, the root's data new at every start */
    size_t plen = maxlen;
    unsigned char *pbuf = malloc(plen);
    MPI_Request preq;
    int proot = size - 1;
    MPI_Bcast_init(pbuf, (int) plen, MPI_BYTE, proot, MPI_COMM_WORLD, MPI_INFO_NULL, &preq);
    for (int s = 0; s < starts && !fails; s++) {
        long id = 100000 + s;
        for (size_t i = 0; i < plen; i++)
            pbuf[i] = rank == proot ? byte_of(id, i) : 0;
        MPI_Start(&preq);
        MPI_Wait(&preq, MPI_STATUS_IGNORE);
        fails += check(pbuf, plen, id, rank);
    }
    MPI_Request_free(&preq);
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
    unsigned long long sums[2] = { posted, bcasts }, tot[2];
    MPI_Reduce(sums, tot, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int all_fails;
    MPI_Allreduce(&fails, &all_fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!rank) {
        printf("ibcast_mcast: %ld MPI_Ibcast (up to %d in flight) and %ld MPI_Bcast interleaved, "
               "%d starts of one MPI_Bcast_init, up to %zu B: %llu posted and %llu broadcasts in "
               "all by multicast, summed over ranks\n", nonblocking, inflight, blocking, starts,
               maxlen, tot[0], tot[1]);
        if (!all_fails)
            printf("ibcast_mcast: all checks passed\n");
    }
    for (int j = 0; j < inflight; j++)
        free(bufs[j]);
    free(bufs);
    free(lens);
    free(ids);
    free(reqs);
    free(pbuf);
    MPI_Comm_free(&node);
    MPI_T_finalize();
    MPI_Finalize();
    return all_fails ? 1 : 0;
}
