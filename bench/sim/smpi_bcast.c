/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* smpi_bcast: the point-to-point MPI_Bcast baseline for ibmc_sim, run under
 * SimGrid's SMPI (smpicc / smpirun) on the platform ibmc_sim writes
 * (--platform-out).  It measures what ibmc_sim measures (README.md,
 * "Validation against seed 000"); the benchmarks are those of seed 000 §6:
 *
 *   smpi_bcast latency SIZE K [SETTLE_US]
 *       K broadcasts of SIZE bytes from rank 0, each preceded by a barrier.
 *       After the barrier the root waits SETTLE_US (default 20) of simulated
 *       time, so that every rank has left the barrier and sits in MPI_Bcast
 *       before the root starts (ibmc_sim's ideal barrier releases every node
 *       at once).  Latency of broadcast k = max over ranks of the time of
 *       completing MPI_Bcast (MPI_Reduce MAX) - the root's start.
 *       Prints mean_lat_us (mean over the K broadcasts).
 *   smpi_bcast rate SIZE K
 *       barrier; the root records its start; K back-to-back MPI_Bcast; every
 *       rank records the end of its last one; span = max end - root's start
 *       (the same span as ibmc_sim's --mode rate); bcasts_per_s = K / span.
 *   smpi_bcast skew SIZE K SKEW_US [SEED]
 *       K times: barrier, each receiver (rank != 0) waits uniform 0..SKEW_US
 *       of simulated time (smpi_execute: a computation, the process does not
 *       progress MPI meanwhile), then MPI_Bcast.  mean_in_bcast_us = mean
 *       time inside MPI_Bcast over receivers and broadcasts (seed 000 §6.4).
 *   smpi_bcast irate SIZE K INFLIGHT
 *       the rate mode with MPI_Ibcast: every rank keeps up to INFLIGHT
 *       broadcasts outstanding, each in a buffer of its own, and waits for
 *       the oldest (MPI_Wait) before it posts the next, as ibmc_sim
 *       --inflight does; span and bcasts_per_s as in rate, every byte of
 *       every broadcast checked.  SMPI's MPI_Ibcast has one algorithm of
 *       its own (the root sends to every other rank), whatever
 *       --cfg=smpi/bcast selects for MPI_Bcast.
 *
 * Run it with --cfg=smpi/simulate-computation:no so that real CPU time does
 * not leak into simulated time (only smpi_execute delays are simulated), and
 * --cfg=smpi/host-speed:<the platform hosts' flop/s> (1e9 for ibmc_sim's
 * platform): smpi_execute(d) lasts d * host-speed / host's speed.  Set
 * SMPI_BCAST_DEBUG in the environment for per-rank times (latency mode).
 * Every figure printed is SIMULATED.  Buffers are checked bit-exact. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <mpi.h>
#include <smpi/smpi.h>
#include "smpi_args.h"

static unsigned char byte_of(int k, size_t i)
{
    return (unsigned char) ((k + 1) * 131 + i * 29 + (i >> 8) + (i >> 16) * 7);
}

/* splitmix64: the receivers' delays, deterministic per (seed, rank) */
static uint64_t rs;
static double unit(void)
{
    uint64_t z = (rs += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double) (z >> 11) * (1.0 / 9007199254740992.0);
}

int main(int argc, char *argv[])
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    argc = smpi_positional_args(argc, argv);
    if (argc < 4) {
        if (!rank)
            fprintf(stderr, "usage: smpi_bcast latency|rate|skew SIZE K [SETTLE_US|SKEW_US [SEED]]\n"
                    "       smpi_bcast irate SIZE K INFLIGHT\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *mode = argv[1];
    size_t size = (size_t) strtoull(argv[2], NULL, 0);
    int K = atoi(argv[3]);
    double arg = argc > 4 ? atof(argv[4]) * 1e-6 : -1;
    uint64_t seed = argc > 5 ? strtoull(argv[5], NULL, 0) : 1;
    rs = seed * 0x100000001b3ULL + (uint64_t) rank * 0x9e3779b97f4a7c15ULL;
    unsigned char *buf = malloc(size ? size : 1);
    long bad = 0;
    int inflight = 0;           /* irate: broadcasts outstanding */
    double sum = 0, t0, t1, tmax;

    if (!strcmp(mode, "latency")) {
        double settle = arg >= 0 ? arg : 20e-6;
        for (int k = 0; k < K; k++) {
            if (rank == 0)
                for (size_t i = 0; i < size; i++)
                    buf[i] = byte_of(k, i);
            else
                memset(buf, 0xee, size);
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0 && settle > 0)
                smpi_execute(settle);
            t0 = MPI_Wtime();
            MPI_Bcast(buf, (int) size, MPI_BYTE, 0, MPI_COMM_WORLD);
            t1 = MPI_Wtime();
            if (getenv("SMPI_BCAST_DEBUG"))
                fprintf(stderr, "rank %d iteration %d: bcast from %.3f to %.3f us\n", rank, k,
                        t0 * 1e6, t1 * 1e6);
            MPI_Reduce(&t1, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0)
                sum += tmax - t0;
            if (rank != 0)
                for (size_t i = 0; i < size; i++)
                    bad += buf[i] != byte_of(k, i);
        }
    } else if (!strcmp(mode, "rate")) {
        if (rank == 0)
            for (size_t i = 0; i < size; i++)
                buf[i] = byte_of(0, i);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (int k = 0; k < K; k++)
            MPI_Bcast(buf, (int) size, MPI_BYTE, 0, MPI_COMM_WORLD);
        t1 = MPI_Wtime();
        MPI_Reduce(&t1, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            sum = tmax - t0;
        if (rank != 0)
            for (size_t i = 0; i < size; i++)
                bad += buf[i] != byte_of(0, i);
    } else if (!strcmp(mode, "irate")) {
        inflight = argc > 4 ? atoi(argv[4]) : 0;
        if (inflight < 1) {
            if (!rank)
                fprintf(stderr, "smpi_bcast: irate needs INFLIGHT >= 1\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        size_t slot = size ? size : 1;
        unsigned char *bufs = malloc((size_t) inflight * slot);
        MPI_Request *req = malloc((size_t) inflight * sizeof(*req));
        int posted = 0, done = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        while (done < K) {
            for (; posted < K && posted - done < inflight; posted++) {
                unsigned char *b = bufs + (size_t) (posted % inflight) * slot;
                if (rank == 0)
                    for (size_t i = 0; i < size; i++)
                        b[i] = byte_of(posted, i);
                else
                    memset(b, 0xee, size);
                MPI_Ibcast(b, (int) size, MPI_BYTE, 0, MPI_COMM_WORLD, &req[posted % inflight]);
            }
            unsigned char *b = bufs + (size_t) (done % inflight) * slot;
            MPI_Wait(&req[done % inflight], MPI_STATUS_IGNORE);
            if (rank != 0)
                for (size_t i = 0; i < size; i++)
                    bad += b[i] != byte_of(done, i);
            done++;
        }
        t1 = MPI_Wtime();
        MPI_Reduce(&t1, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            sum = tmax - t0;
        free(bufs);
        free(req);
    } else if (!strcmp(mode, "skew")) {
        double skew = arg > 0 ? arg : 0;
        for (int k = 0; k < K; k++) {
            if (rank == 0)
                for (size_t i = 0; i < size; i++)
                    buf[i] = byte_of(k, i);
            else
                memset(buf, 0xee, size);
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank != 0 && skew > 0)
                smpi_execute(unit() * skew);
            t0 = MPI_Wtime();
            MPI_Bcast(buf, (int) size, MPI_BYTE, 0, MPI_COMM_WORLD);
            t1 = MPI_Wtime();
            if (rank != 0)
                sum += t1 - t0;
            if (rank != 0)
                for (size_t i = 0; i < size; i++)
                    bad += buf[i] != byte_of(k, i);
        }
        double all;
        MPI_Reduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        sum = all;
    } else {
        if (!rank)
            fprintf(stderr, "smpi_bcast: unknown mode %s\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long allbad;
    MPI_Reduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("SIMULATED smpi_bcast mode=%s nodes=%d size=%zu iters=%d", mode, np, size, K);
        if (!strcmp(mode, "latency"))
            printf(" mean_lat_us=%.3f", sum / K * 1e6);
        else if (!strcmp(mode, "rate"))
            printf(" span_us=%.3f bcasts_per_s=%.1f", sum * 1e6, K / sum);
        else if (!strcmp(mode, "irate"))
            printf(" inflight=%d span_us=%.3f bcasts_per_s=%.1f", inflight, sum * 1e6, K / sum);
        else
            printf(" skew_us=%g mean_in_bcast_us=%.3f", arg * 1e6,
                   sum / ((double) K * (np - 1)) * 1e6);
        printf(" bad_bytes=%ld result=%s\n", allbad, allbad ? "FAIL" : "ok");
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
