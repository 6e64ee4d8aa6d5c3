/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* MPI_Barrier with MPIR_CVAR_BARRIER_INTRA_ALGORITHM=ibmc_mcast: a late
 * process proves that nobody leaves early.  In barrier i, rank i % size
 * sleeps before it enters (2 ms every third barrier, 0.2 ms otherwise);
 * every rank reads CLOCK_MONOTONIC just before it enters and just after
 * it leaves, and no rank may leave any barrier before the last rank of
 * that barrier entered it.  The ranks must share one clock (one host, as
 * in the test VM, where the nodes are pretend nodes); the program refuses
 * to run otherwise.  The counters prove the path: each node leader made
 * one multicast broadcast (the release) per barrier, the other ranks
 * none, and nothing fell back; each node leader but the first reported
 * its arrival once per barrier, and some of those reports were RDMA
 * writes into its parent's board (all of them RC messages with
 * --expect-rc-arrivals).
 *
 * usage: barrier_mcast [--iters N] [--threads T] [--expect-fallback]
 *                      [--expect-lossless] [--expect-rc-arrivals]
 *   --threads T        under MPI_THREAD_MULTIPLE, T threads, each on a
 *                      duplicate of MPI_COMM_WORLD of its own, run their
 *                      barriers at once (each thread's barriers checked
 *                      as above)
 *   --expect-fallback  the channel is off: no multicast, one fallback per
 *                      barrier at each node leader, still a barrier
 *   --expect-lossless  no injected loss: besides, no NAK, retransmission
 *                      or duplicate at any rank during the barriers
 *   --expect-rc-arrivals  board writes are off
 *                      (MPIR_CVAR_IBMC_MCAST_RDMA_ACKS=0): every arrival
 *                      report is an RC message */

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "mpit_pvar.h"

#define MAX_THREADS 8

static int rank, size, fails;

static unsigned long long pvar(const char *name)
{
    return mpit_pvar_need("barrier_mcast", name, &fails);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

typedef struct {
    MPI_Comm comm;
    int id;
    long iters;
    double *enter, *leave;      /* this rank's times, one per barrier */
} stream_t;

static void *stream_run(void *p)
{
    stream_t *s = p;
    for (long i = 0; i < s->iters; i++) {
        if (i % size == rank)
            usleep(i % 3 == 0 ? 2000 : 200);
        s->enter[i] = now();
        MPI_Barrier(s->comm);
        s->leave[i] = now();
    }
    return NULL;
}

/* At rank 0: every rank's leave against the last entry of each barrier.
 * Returns the violations; *margin gets the smallest leave - last entry. */
static int check_times(const stream_t * s, double *margin)
{
    size_t n = (size_t) s->iters * (size_t) size;
    double *enter = rank == 0 ? malloc(sizeof(double) * n) : NULL;
    double *leave = rank == 0 ? malloc(sizeof(double) * n) : NULL;
    MPI_Gather(s->enter, (int) s->iters, MPI_DOUBLE, enter, (int) s->iters, MPI_DOUBLE, 0,
               MPI_COMM_WORLD);
    MPI_Gather(s->leave, (int) s->iters, MPI_DOUBLE, leave, (int) s->iters, MPI_DOUBLE, 0,
               MPI_COMM_WORLD);
    int bad = 0;
    if (rank == 0) {
        for (long i = 0; i < s->iters; i++) {
            double last = 0;
            int who = 0;
            for (int r = 0; r < size; r++)
                if (enter[(size_t) r * s->iters + i] > last) {
                    last = enter[(size_t) r * s->iters + i];
                    who = r;
                }
            for (int r = 0; r < size; r++) {
                double d = leave[(size_t) r * s->iters + i] - last;
                if (d < *margin)
                    *margin = d;
                if (d < 0 && bad++ < 5)
                    printf("barrier_mcast: FAIL: stream %d, barrier %ld: rank %d left %.1f us "
                           "before rank %d entered\n", s->id, i, r, -d * 1e6, who);
            }
        }
    }
    free(enter);
    free(leave);
    return bad;
}

int main(int argc, char **argv)
{
    int provided, nthreads = 0, expect_fallback = 0, expect_lossless = 0, expect_rc = 0;
    long iters = 200;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = strtol(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--expect-fallback"))
            expect_fallback = 1;
        else if (!strcmp(argv[i], "--expect-lossless"))
            expect_lossless = 1;
        else if (!strcmp(argv[i], "--expect-rc-arrivals"))
            expect_rc = 1;
        else {
            printf("usage: barrier_mcast [--iters N] [--threads T] [--expect-fallback] "
                   "[--expect-lossless] [--expect-rc-arrivals]\n");
            return 2;
        }
    }
    if (nthreads < 0 || nthreads > MAX_THREADS || iters < 1) {
        printf("barrier_mcast: --threads takes 0 to %d, --iters at least 1\n", MAX_THREADS);
        return 2;
    }
    MPI_Init_thread(&argc, &argv, nthreads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    if (nthreads && provided != MPI_THREAD_MULTIPLE) {
        printf("barrier_mcast: FAIL: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* one clock: every rank on rank 0's host */
    char host[MPI_MAX_PROCESSOR_NAME] = "", host0[MPI_MAX_PROCESSOR_NAME];
    int len, same, all_same;
    MPI_Get_processor_name(host, &len);
    memcpy(host0, host, sizeof(host));
    MPI_Bcast(host0, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    same = !strcmp(host, host0);
    MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all_same) {
        if (!rank)
            printf("barrier_mcast: FAIL: the ranks are on several hosts; the late-process "
                   "proof needs one clock\n");
        MPI_Finalize();
        return 1;
    }

    MPI_Comm node;
    int node_rank;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    int leader = node_rank == 0;

    int nstreams = nthreads ? nthreads : 1;
    stream_t s[MAX_THREADS];
    for (int t = 0; t < nstreams; t++) {
        s[t].id = t;
        s[t].iters = iters;
        s[t].enter = malloc(sizeof(double) * (size_t) iters);
        s[t].leave = malloc(sizeof(double) * (size_t) iters);
        if (nthreads)
            MPI_Comm_dup(MPI_COMM_WORLD, &s[t].comm);
        else
            s[t].comm = MPI_COMM_WORLD;
        /* a communicator's first barrier sets up its channel and MPICH's
         * node-local collectives: before the counters */
        MPI_Barrier(s[t].comm);
    }

    unsigned long long bcasts0 = pvar("ibmc_mcast_bcasts");
    unsigned long long fb0 = pvar("ibmc_mcast_fallbacks");
    unsigned long long arr0 = pvar("ibmc_mcast_arrivals_sent");
    unsigned long long wr0 = pvar("ibmc_mcast_arrivals_written");
    unsigned long long rep0[MPIT_NREPAIRS];
    mpit_repairs_read("barrier_mcast", rep0, &fails);
    if (nthreads) {
        pthread_t th[MAX_THREADS];
        for (int t = 0; t < nthreads; t++)
            if (pthread_create(&th[t], NULL, stream_run, &s[t])) {
                printf("barrier_mcast: FAIL: pthread_create\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        for (int t = 0; t < nthreads; t++)
            pthread_join(th[t], NULL);
    } else {
        stream_run(&s[0]);
    }
    unsigned long long bcasts = pvar("ibmc_mcast_bcasts") - bcasts0;
    unsigned long long fb = pvar("ibmc_mcast_fallbacks") - fb0;
    unsigned long long arr = pvar("ibmc_mcast_arrivals_sent") - arr0;
    unsigned long long wr = pvar("ibmc_mcast_arrivals_written") - wr0;
    if (expect_lossless)
        mpit_repairs_check("barrier_mcast", rank, rep0, &fails);

    double margin = 1e9;
    int early = 0;
    for (int t = 0; t < nstreams; t++)
        early += check_times(&s[t], &margin);
    fails += early;

    unsigned long long calls = (unsigned long long) iters * (unsigned long long) nstreams;
    unsigned long long want = leader && !expect_fallback ? calls : 0;
    unsigned long long want_fb = leader && expect_fallback ? calls : 0;
    if (bcasts != want || fb != want_fb) {
        printf("barrier_mcast: FAIL: rank %d%s: %llu broadcasts by multicast and %llu "
               "fallbacks in %llu barriers; not %llu and %llu\n", rank,
               leader ? " (a node leader)" : "", bcasts, fb, calls, want, want_fb);
        fails++;
    }
    /* world rank 0 leads the node of the node leaders' rank 0, which
     * reports to nobody */
    unsigned long long want_arr = leader && rank != 0 && !expect_fallback ? calls : 0;
    if (arr != want_arr || (expect_rc ? wr != 0 : want_arr && wr == 0)) {
        printf("barrier_mcast: FAIL: rank %d%s: %llu arrivals reported, %llu of them written "
               "by RDMA, in %llu barriers; not %llu, %s\n", rank,
               leader ? " (a node leader)" : "", arr, wr, calls, want_arr,
               expect_rc ? "none written" : "some written");
        fails++;
    }
    unsigned long long sums[2] = { arr, wr }, all_sums[2];
    MPI_Reduce(sums, all_sums, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int all_fails;
    MPI_Allreduce(&fails, &all_fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!rank) {
        printf("barrier_mcast: %d ranks, %d stream%s of %ld barriers; no rank left before the "
               "last entered: %s (closest: %.1f us after); rank 0: %llu broadcasts by "
               "multicast, %llu fallbacks; all ranks: %llu arrivals reported, %llu by RDMA "
               "write\n", size, nstreams, nstreams > 1 ? "s" : "", iters,
               early ? "FALSE" : "true", margin * 1e6, bcasts, fb, all_sums[0], all_sums[1]);
        if (!all_fails)
            printf("barrier_mcast: all checks passed\n");
    }
    for (int t = 0; t < nstreams; t++) {
        if (nthreads)
            MPI_Comm_free(&s[t].comm);
        free(s[t].enter);
        free(s[t].leave);
    }
    MPI_Comm_free(&node);
    MPI_T_finalize();
    MPI_Finalize();
    return all_fails ? 1 : 0;
}
