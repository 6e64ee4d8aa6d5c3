/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* smpi_allgather: the point-to-point MPI_Allgather baseline for noderd_sim,
 * run under SimGrid's SMPI (smpicc / smpirun) on the platform ibmc_sim
 * writes (--platform-out), with the algorithm chosen by
 * --cfg=smpi/allgather:rdb|ring|bruck|mpich.  It measures what noderd_sim
 * measures (README.md, "Allgather: validation against seed 001"):
 *
 *   smpi_allgather latency SIZE K [SETTLE_US]
 *       K calls of SIZE bytes per rank.  Before each, the ranks meet in a
 *       barrier, agree (MPI_Allreduce) on the latest time any left it, and
 *       each waits until SETTLE_US (default 1000) of simulated time after
 *       that, so that all start together (noderd_sim's ideal barrier
 *       releases every process at once).  SETTLE_US must outlast the
 *       MPI_Allreduce: a rank that reaches the common start late is counted
 *       (late_starts) and fails the run.  Latency of call k = the latest
 *       end of MPI_Allgather over ranks - that common start.  Prints
 *       mean_lat_us over the K calls.
 *
 * Run it with --cfg=smpi/simulate-computation:no so that real CPU time does
 * not leak into simulated time.  Every figure printed is SIMULATED.
 * Receive buffers are checked bit-exact (checked=1), except when all ranks'
 * together would pass 2 GiB: then they share one (SMPI_SHARED_MALLOC) and
 * only the timing counts (checked=0). */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <mpi.h>
#include <smpi/smpi.h>
#include "smpi_args.h"

static unsigned char byte_of(int k, int rank, size_t i)
{
    return (unsigned char) ((k + 1) * 131 + rank * 17 + i * 29 + (i >> 8));
}

int main(int argc, char *argv[])
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    argc = smpi_positional_args(argc, argv);
    if (argc < 4 || strcmp(argv[1], "latency")) {
        if (!rank)
            fprintf(stderr, "usage: smpi_allgather latency SIZE K [SETTLE_US]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t size = (size_t) strtoull(argv[2], NULL, 0);
    int K = atoi(argv[3]);
    double settle = argc > 4 ? atof(argv[4]) * 1e-6 : 1000e-6;
    /* all ranks' receive buffers at once exceed memory at thousands of
     * ranks: past 2 GiB in all, they share one unchecked buffer */
    int shared = (double) size * np * np > 2147483648.0;
    unsigned char *sbuf = malloc(size ? size : 1);
    unsigned char *rbuf = shared ? SMPI_SHARED_MALLOC(size * (size_t) np + 1) :
        malloc(size * (size_t) np + 1);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "smpi_allgather: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long bad = 0, late = 0;
    double sum = 0;

    for (int k = 0; k < K; k++) {
        for (size_t i = 0; i < size; i++)
            sbuf[i] = byte_of(k, rank, i);
        if (!shared)
            memset(rbuf, 0xee, size * (size_t) np);
        MPI_Barrier(MPI_COMM_WORLD);
        double left = MPI_Wtime(), start;
        MPI_Allreduce(&left, &start, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        start += settle;
        double now = MPI_Wtime();
        /* a sleep, not smpi_execute: processes of one host would share
         * its CPU and wake late */
        if (start > now) {
            double d = start - now;
            struct timespec ts = { (time_t) d, (long) ((d - (time_t) d) * 1e9) };
            nanosleep(&ts, NULL);
        }
        if (MPI_Wtime() - start > 1e-9 || MPI_Wtime() < start - 1e-9)
            late++;
        MPI_Allgather(sbuf, (int) size, MPI_BYTE, rbuf, (int) size, MPI_BYTE, MPI_COMM_WORLD);
        double t1 = MPI_Wtime(), tmax;
        MPI_Reduce(&t1, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
            sum += tmax - start;
        for (int r = 0; r < np && !shared; r++)
            for (size_t i = 0; i < size; i++)
                bad += rbuf[(size_t) r * size + i] != byte_of(k, r, i);
    }
    long mine[2] = { bad, late }, all[2];
    MPI_Reduce(mine, all, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("SIMULATED smpi_allgather mode=latency ranks=%d size=%zu iters=%d "
               "mean_lat_us=%.3f checked=%d bad_bytes=%ld late_starts=%ld result=%s\n", np, size,
               K, sum / K * 1e6, !shared, all[0], all[1], all[0] || all[1] ? "FAIL" : "ok");
    free(sbuf);
    if (shared)
        SMPI_SHARED_FREE(rbuf);
    else
        free(rbuf);
    MPI_Finalize();
    return 0;
}
