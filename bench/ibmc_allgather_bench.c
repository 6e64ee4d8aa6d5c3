/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* MPI_Allgather latency in the manner of the OSU benchmark: for each size
 * per process from 1 byte to MAX, WARMUP untimed calls, then ITERS timed
 * back to back; each rank's mean time per call, and over the ranks their
 * mean and the slowest.  The first call of each size is checked byte for
 * byte, so that a broken path cannot post a number.  The algorithm is
 * whatever the environment selects (MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM).
 *
 *   mpiexec -n 8 ibmc_allgather_bench [MAX=1048576] [ITERS=100]
 *
 * Prints "allgather-bench: BYTES MEAN_US MAX_US" per size, after a header
 * with the conditions of the run. */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t max = argc > 1 ? strtoull(argv[1], NULL, 0) : 1048576;
    int iters = argc > 2 ? atoi(argv[2]) : 100, warmup = 5, bad = 0;
    unsigned char *send = malloc(max), *recv = malloc(max * size);
    if (!send || !recv) {
        fprintf(stderr, "allgather-bench: out of memory for %zu bytes per rank\n", max);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) {
        char host[64] = "?", date[32];
        time_t now = time(NULL);
        gethostname(host, sizeof(host));
        strftime(date, sizeof(date), "%Y-%m-%d %H:%M", gmtime(&now));
        const char *algo = getenv("MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM");
        const char *cl = getenv("MPIR_CVAR_NUM_CLIQUES");
        printf("# allgather-bench: %d ranks, %s pretend nodes, algorithm %s, overlap %s, on %s, "
               "%s UTC, %d timed calls per size\n", size, cl ? cl : "no", algo ? algo : "auto",
               getenv("MPIR_CVAR_IBMC_NODE_RD_OVERLAP") ? getenv("MPIR_CVAR_IBMC_NODE_RD_OVERLAP") :
               "default", host, date, iters);
    }
    for (size_t len = 1; len <= max; len *= 2) {
        for (size_t i = 0; i < len; i++)
            send[i] = (unsigned char) (rank * 31 + i);
        memset(recv, 0, len * size);
        MPI_Allgather(send, (int) len, MPI_BYTE, recv, (int) len, MPI_BYTE, MPI_COMM_WORLD);
        for (int r = 0; r < size && !bad; r++)
            for (size_t i = 0; i < len; i++)
                if (recv[len * r + i] != (unsigned char) (r * 31 + i)) {
                    fprintf(stderr, "allgather-bench: rank %d: wrong data from rank %d at %zu "
                            "bytes\n", rank, r, len);
                    bad = 1;
                    break;
                }
        for (int i = 1; i < warmup; i++)
            MPI_Allgather(send, (int) len, MPI_BYTE, recv, (int) len, MPI_BYTE, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Allgather(send, (int) len, MPI_BYTE, recv, (int) len, MPI_BYTE, MPI_COMM_WORLD);
        double t = (MPI_Wtime() - t0) / iters * 1e6, sum, worst;
        MPI_Reduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("allgather-bench: %zu %.2f %.2f\n", len, sum / size, worst);
            fflush(stdout);
        }
        /* fewer calls for large sizes keep a run within minutes in the VM */
        if (len >= 65536 && iters > 20)
            iters /= 2;
    }
    int any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    free(send);
    free(recv);
    MPI_Finalize();
    return any;
}
