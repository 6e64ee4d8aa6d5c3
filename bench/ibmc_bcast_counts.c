/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The work one MPI_Bcast costs, counted rather than timed: ITERS
 * broadcasts of SIZE bytes from rank 0, back to back, with whatever
 * algorithm MPIR_CVAR_BCAST_INTRA_ALGORITHM selects, and ibmc's MPI_T
 * counters read before and after.  Every receiver checks every byte of
 * every broadcast.  One barrier after the loop is counted too (a few
 * packets, spread over ITERS).
 *
 * usage: ibmc_bcast_counts SIZE
 *            [ITERS [late|blocking|nonblocking|persistent|persistent-ordered]]
 * Prints, from rank 0, "bcast-counts: SIDE COUNTER VALUE" lines with the
 * counter's change per broadcast: SIDE root (rank 0) or recv (the mean of
 * the other ranks), then "bcast-counts: ok" or "bcast-counts: FAIL ...".
 *
 * With "late", the receivers enter their ITERS broadcasts late, so every
 * packet is already queued and no timer runs while they take them (ITERS
 * must fit the root's window, or the root waits for them): rank r waits
 * 300 ms plus 100 ms per bit set in r.  In a binomial tree from rank 0 a
 * rank's parent is the rank with its lowest set bit cleared, so a parent
 * has forwarded everything before its children start, and no receiver's
 * count includes waiting for another.  Under callgrind with --collect-atstart=no, only the
 * measured MPI_Bcast calls are counted (CALLGRIND_TOGGLE_COLLECT around
 * each): the instructions of one broadcast, root and receivers apart.
 *
 * "nonblocking" makes each broadcast an MPI_Ibcast and its MPI_Wait,
 * "persistent" an MPI_Start and MPI_Wait of one MPI_Bcast_init request
 * (MPIR_CVAR_IBCAST_INTRA_ALGORITHM picks their algorithm).
 * "persistent-ordered" starts the receivers first: each calls MPI_Start,
 * then meets the others in an MPI_Barrier on a duplicate of
 * MPI_COMM_WORLD, and the root calls MPI_Start only after it, as a root
 * that computes between broadcasts would; the barrier's point-to-point
 * packets are counted too.
 *
 * "barrier" counts MPI_Barrier calls instead, and "allreduce" MPI_Allreduce
 * calls of SIZE bytes of doubles (MPI_SUM, every element checked), each
 * with the algorithm of its own CVAR; rank 0, their root, is "root". */

#define _DEFAULT_SOURCE /* usleep */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../test/ibmc/mpit_pvar.h"
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_TOGGLE_COLLECT
#endif

static const char *counters[] = {
    "ibmc_mcast_bcasts", "ibmc_mcast_pkts_sent", "ibmc_mcast_post_calls",
    "ibmc_mcast_send_cqes", "ibmc_mcast_pkts_recvd", "ibmc_mcast_echoes",
    "ibmc_mcast_acks_sent", "ibmc_mcast_acks_written", "ibmc_mcast_naks_sent",
    "ibmc_mcast_naks_asked", "ibmc_mcast_naks_spared", "ibmc_mcast_naks_premature",
    "ibmc_mcast_naks_deferred", "ibmc_mcast_retransmits", "ibmc_mcast_ack_probes",
    "ibmc_mcast_asks_multicast",
    "ibmc_mcast_duplicates", "ibmc_mcast_foreign", "ibmc_mcast_bcasts_posted",
    "ibmc_mcast_copies", "ibmc_mcast_in_place", "ibmc_mcast_place_recvd",
    "ibmc_mcast_relays", "ibmc_mcast_fallbacks",
    "ibmc_mcast_arrivals_sent", "ibmc_mcast_arrivals_written", "ibmc_mcast_arrivals_read",
    "ibmc_eager_pkts_sent", "ibmc_eager_pkts_recvd", "ibmc_ctrl_pkts_sent", "ibmc_rdma_reads"
};

#define NC ((int) (sizeof(counters) / sizeof(counters[0])))

static unsigned char byte_of(int iter, size_t i)
{
    return (unsigned char) (iter * 29 + i * 7 + (i >> 8) + 1);
}

static void read_all(double *v, int *have)
{
    for (int i = 0; i < NC; i++) {
        int found;
        v[i] = (double) mpit_pvar_read(counters[i], &found);
        have[i] = found;
    }
}

/* Drive progress for `seconds` without a message to wait for.  The first
 * broadcast on a channel runs on a NAK timeout that has learned nothing
 * yet, so a receiver may ask for packets the root is still sending; the
 * answer goes over RC and can land after the barriers, in the measured
 * broadcasts, as duplicates they did not cause (2026-11-27,
 * commit 5fc60de). */
static void settle(double seconds)
{
    double until = MPI_Wtime() + seconds;
    int flag;
    while (MPI_Wtime() < until)
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
}

enum call { C_BCAST, C_BARRIER, C_ALLREDUCE };

/* One call: a broadcast from rank 0 (blocking, nonblocking, or a start of
 * the persistent request *req), a barrier, or an allreduce of buf's
 * doubles into out. */
static void one_call(enum call call, unsigned char *buf, double *out, size_t len, int nonblocking,
                     int persistent, MPI_Request * req, MPI_Comm order)
{
    if (call == C_BARRIER) {
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (call == C_ALLREDUCE) {
        MPI_Allreduce(buf, out, (int) (len / sizeof(double)), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else if (persistent && order != MPI_COMM_NULL) {
        int rank;
        MPI_Comm_rank(order, &rank);
        if (rank != 0)
            MPI_Start(req);
        MPI_Barrier(order);
        if (rank == 0)
            MPI_Start(req);
        MPI_Wait(req, MPI_STATUS_IGNORE);
    } else if (persistent) {
        MPI_Start(req);
        MPI_Wait(req, MPI_STATUS_IGNORE);
    } else if (nonblocking) {
        MPI_Ibcast(buf, (int) len, MPI_BYTE, 0, MPI_COMM_WORLD, req);
        MPI_Wait(req, MPI_STATUS_IGNORE);
    } else {
        MPI_Bcast(buf, (int) len, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t len = argc > 1 ? strtoul(argv[1], NULL, 0) : 1;
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    const char *mode = argc > 3 ? argv[3] : "blocking";
    int late = !strcmp(mode, "late"), nonblocking = !strcmp(mode, "nonblocking");
    int ordered = !strcmp(mode, "persistent-ordered");
    int persistent = ordered || !strcmp(mode, "persistent");
    MPI_Comm order = MPI_COMM_NULL;
    if (ordered)
        MPI_Comm_dup(MPI_COMM_WORLD, &order);
    enum call call = !strcmp(mode, "barrier") ? C_BARRIER :
        !strcmp(mode, "allreduce") ? C_ALLREDUCE : C_BCAST;
    if (call == C_BCAST && !late && !nonblocking && !persistent && strcmp(mode, "blocking")) {
        if (rank == 0)
            fprintf(stderr, "usage: ibmc_bcast_counts SIZE [ITERS [late|blocking|nonblocking|"
                    "persistent|persistent-ordered|barrier|allreduce]]\n");
        MPI_Finalize();
        return 2;
    }
    if (call == C_ALLREDUCE)
        len = (len + sizeof(double) - 1) / sizeof(double) * sizeof(double);
    unsigned char *buf = malloc(len ? len : 1);
    double *out = malloc(len ? len : 1);
    double before[NC], after[NC], d[NC], sum[NC];
    int have[NC], bad = 0;

    /* the first broadcast on a communicator may set a channel up; with
     * "late", a first round of ITERS broadcasts entered late, as measured,
     * so that what the first use of MPICH's unexpected-message path
     * allocates and zeroes (request pools grown for ITERS messages at once)
     * is not counted */
    MPI_Request req = MPI_REQUEST_NULL;
    if (persistent)
        MPI_Bcast_init(buf, (int) len, MPI_BYTE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    one_call(call, buf, out, len, nonblocking, persistent, &req, order);
    settle(0.05);
    if (late) {
        if (rank != 0)
            usleep(100000 + 100000 * (unsigned) __builtin_popcount((unsigned) rank));
        for (int it = 0; it < iters; it++)
            MPI_Bcast(buf, (int) len, MPI_BYTE, 0, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    read_all(before, have);
    if (late && rank != 0)
        usleep(300000 + 100000 * (unsigned) __builtin_popcount((unsigned) rank));
    size_t nd = len / sizeof(double);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        if (call == C_ALLREDUCE)
            for (size_t i = 0; i < nd; i++)
                ((double *) (void *) buf)[i] = (double) ((rank + it + (int) i) % 5);
        else
            for (size_t i = 0; i < len; i++)
                buf[i] = rank == 0 ? byte_of(it, i) : 0xee;
        CALLGRIND_TOGGLE_COLLECT;
        one_call(call, buf, out, len, nonblocking, persistent, &req, order);
        CALLGRIND_TOGGLE_COLLECT;
        for (size_t i = 0; i < nd && call == C_ALLREDUCE && !bad; i++) {
            double w = 0;
            for (int r = 0; r < size; r++)
                w += (double) ((r + it + (int) i) % 5);
            if (out[i] != w) {
                fprintf(stderr, "bcast-counts: FAIL: rank %d, allreduce %d, element %zu is %g, "
                        "not %g\n", rank, it, i, out[i], w);
                bad = 1;
            }
        }
        for (size_t i = 0; i < len && call == C_BCAST && !bad; i++)
            if (buf[i] != byte_of(it, i)) {
                fprintf(stderr, "bcast-counts: FAIL: rank %d, broadcast %d, byte %zu is %u, "
                        "not %u\n", rank, it, i, buf[i], byte_of(it, i));
                bad = 1;
            }
    }
    /* the VM's time per call, slowest rank: a ratio between algorithms of
     * one run (one boot), never an absolute figure (bench/README.md) */
    double us = (MPI_Wtime() - t0) * 1e6 / iters, us_max = 0;
    MPI_Reduce(&us, &us_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    read_all(after, have);
    for (int i = 0; i < NC; i++)
        d[i] = (after[i] - before[i]) / iters;
    /* the receivers' mean: everyone's sum less the root's */
    MPI_Reduce(d, sum, NC, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    int anybad = 0;
    MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < NC; i++) {
            if (!have[i])
                continue;
            printf("bcast-counts: root %s %.3f\n", counters[i], d[i]);
            printf("bcast-counts: recv %s %.3f\n", counters[i],
                   size > 1 ? (sum[i] - d[i]) / (size - 1) : 0.0);
        }
        if (!late) {
            printf("bcast-counts: root us_per_call %.1f\n", us_max);
            printf("bcast-counts: recv us_per_call %.1f\n", us_max);
        }
        if (anybad)
            printf("bcast-counts: FAIL: wrong bytes received\n");
        else
            printf("bcast-counts: ok (%d %s of %zu bytes on %d ranks, every byte checked)\n",
                   iters, call == C_BARRIER ? "barriers" : call == C_ALLREDUCE ? "allreduces" :
                   "broadcasts", call == C_BARRIER ? (size_t) 0 : len, size);
    }
    if (persistent)
        MPI_Request_free(&req);
    if (order != MPI_COMM_NULL)
        MPI_Comm_free(&order);
    free(buf);
    free(out);
    MPI_T_finalize();
    MPI_Finalize();
    return anybad;
}
