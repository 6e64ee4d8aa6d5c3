/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* MPI_Bcast benchmarks after seed 000 §6 (Liu, Mamidala, Panda), for
 * whatever algorithm MPIR_CVAR_BCAST_INTRA_ALGORITHM selects:
 *
 *   latency  (§6.2) the root broadcasts, then one receiver, a different one
 *            each iteration, answers with a 0-byte MPI_Send; the time per
 *            iteration less the one-way point-to-point latency is the time
 *            for the broadcast to reach that receiver.  The point-to-point
 *            latency is half a 0-byte ping-pong with the same receiver in
 *            the same iteration, so that both see the same load (on an
 *            oversubscribed host a separate measurement drifts: more than
 *            the broadcast itself, at 8 ranks on 2 CPUs);
 *   rate     (§6.3) back-to-back broadcasts from one root, then a barrier:
 *            broadcasts completed per second;
 *   skew     (§6.4) a barrier, then every receiver waits a random time of up
 *            to SKEW microseconds before MPI_Bcast: the mean time spent in
 *            MPI_Bcast;
 *   skewsweep the same, for one point of a sweep over SKEW: its lines also
 *            name the SKEW (bench/bcast-compare.sh runs several).
 *
 * usage: ibmc_bcast_bench latency|rate|skew|skewsweep [MAX_BYTES [ITERS [SKEW_US [MIN_BYTES]]]]
 * Sizes are the powers of 4 from the first at least MIN_BYTES (default 1)
 * to MAX_BYTES.
 * Prints "bcast-bench: TEST SIZE VALUE UNIT" lines from rank 0, and for
 * skewsweep "bcast-bench: skewsweep SIZE VALUE us SKEW_US". */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void spin_us(double us)
{
    double t = MPI_Wtime() + us * 1e-6;
    while (MPI_Wtime() < t);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *test = argc > 1 ? argv[1] : "latency";
    size_t max = argc > 2 ? strtoul(argv[2], NULL, 0) : 65536;
    int iters = argc > 3 ? atoi(argv[3]) : 100;
    double skew = argc > 4 ? atof(argv[4]) : 400;
    size_t min = argc > 5 ? strtoul(argv[5], NULL, 0) : 1;
    char *buf = malloc(max ? max : 1);
    memset(buf, 1, max ? max : 1);
    srand(1234 + rank);

    /* untimed: the first broadcast on a communicator may set a channel up */
    MPI_Bcast(buf, 1, MPI_BYTE, 0, MPI_COMM_WORLD);

    size_t first = 1;
    while (first < min)
        first *= 4;
    for (size_t len = first; len <= max; len *= 4) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), in_bcast = 0, in_pingpong = 0;
        for (int i = 0; i < iters; i++) {
            if (!strcmp(test, "latency")) {
                int peer = 1 + i % (size - 1);
                double s = MPI_Wtime();
                MPI_Bcast(buf, (int) len, MPI_BYTE, 0, MPI_COMM_WORLD);
                if (rank == 0)
                    MPI_Recv(NULL, 0, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                else if (rank == peer)
                    MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
                in_bcast += MPI_Wtime() - s;
                /* the others wait in the next broadcast meanwhile, as they did */
                s = MPI_Wtime();
                if (rank == 0) {
                    MPI_Send(NULL, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                    MPI_Recv(NULL, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == peer) {
                    MPI_Recv(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
                }
                in_pingpong += MPI_Wtime() - s;
            } else if (!strcmp(test, "rate")) {
                MPI_Bcast(buf, (int) len, MPI_BYTE, 0, MPI_COMM_WORLD);
            } else {
                MPI_Barrier(MPI_COMM_WORLD);
                if (rank != 0)
                    spin_us(skew * rand() / (double) RAND_MAX);
                double s = MPI_Wtime();
                MPI_Bcast(buf, (int) len, MPI_BYTE, 0, MPI_COMM_WORLD);
                in_bcast += MPI_Wtime() - s;
            }
        }
        if (!strcmp(test, "rate"))
            MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime() - t0, mean_in = 0;
        MPI_Reduce(&in_bcast, &mean_in, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            if (!strcmp(test, "latency")) {
                double pp = in_pingpong / iters / 2;
                printf("bcast-bench: pt2pt %zu %.2f us\n", len, pp * 1e6);
                printf("bcast-bench: latency %zu %.2f us\n", len, (in_bcast / iters - pp) * 1e6);
            } else if (!strcmp(test, "rate"))
                printf("bcast-bench: rate %zu %.1f bcasts/s\n", len, iters / t);
            else if (!strcmp(test, "skew"))
                printf("bcast-bench: skew %zu %.2f us\n", len,
                       mean_in / (size - 1) / iters * 1e6);
            else
                printf("bcast-bench: skewsweep %zu %.2f us %.0f\n", len,
                       mean_in / (size - 1) / iters * 1e6, skew);
            fflush(stdout);
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
