/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Neighbour traffic only: each rank sends to rank + 1 and receives from
 * rank - 1, eager and rendezvous sizes, checked byte for byte.  Run with
 * MPIR_CVAR_IBMC_STATS=1: the "connections" count each rank prints must be
 * at most 2 however many ranks the job has (connections are made on first
 * use, not all-to-all at MPI_Init).
 *
 * --token-delay-ms=N: each rank waits N ms before it passes the closing
 * token on, so the ranks finish one after the other, and those already in
 * MPI_Finalize's barrier connect to those still waiting for the token.
 * Such a connection is the barrier's, not the job's, and the count must
 * not include it. */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    int rank, size, errs = 0, all;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long delay_ms = 0;
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--token-delay-ms=", 17))
            delay_ms = atol(argv[i] + 17);
    struct timespec delay = {.tv_sec = delay_ms / 1000,.tv_nsec = delay_ms % 1000 * 1000000L };
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    size_t max = 1 << 20;
    unsigned char *s = malloc(max), *r = malloc(max);
    for (size_t n = 1; n <= max; n *= 8) {
        for (size_t i = 0; i < n; i++)
            s[i] = (unsigned char) (rank * 31 + i * 7 + n);
        MPI_Sendrecv(s, (int) n, MPI_BYTE, right, 0, r, (int) n, MPI_BYTE, left, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (size_t i = 0; i < n; i++)
            if (r[i] != (unsigned char) (left * 31 + i * 7 + n)) {
                errs++;
                break;
            }
    }
    /* a reduction would connect more pairs; count with the neighbours only */
    int token = errs;
    if (rank == 0) {
        MPI_Send(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD);
        MPI_Recv(&all, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf(all ? "ring: %d errors\n" : "ring: %d ranks, all bytes verified\n", all ? all : size);
    } else {
        MPI_Recv(&all, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        all += errs;
        nanosleep(&delay, NULL);
        MPI_Send(&all, 1, MPI_INT, right, 1, MPI_COMM_WORLD);
    }
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
