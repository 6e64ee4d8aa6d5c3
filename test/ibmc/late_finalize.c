/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* One process reaches MPI_Finalize long after the others, as a rank that
 * writes results does.  Nothing else is sent, so MPI_Finalize's barrier over
 * RC must connect to it while it sleeps, for longer than
 * MPIR_CVAR_IBMC_CONNECT_TIMEOUT: the others must wait for it, as PMI's
 * barrier would, not fail.
 *
 *   late_finalize RANK SECONDS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* MPI_Wtime may not be called after MPI_Finalize */
static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int late = argc > 1 ? atoi(argv[1]) : size - 1;
    int secs = argc > 2 ? atoi(argv[2]) : 5;
    if (late < 0 || late >= size || secs < 0) {
        fprintf(stderr, "usage: late_finalize RANK SECONDS (RANK below %d)\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double t0 = seconds();
    if (rank == late)
        sleep((unsigned) secs);
    MPI_Finalize();
    double waited = seconds() - t0;
    if (rank != late && waited < secs) {
        printf("late_finalize: FAIL: rank %d left MPI_Finalize after %.1f s, before rank %d "
               "entered it\n", rank, waited, late);
        return 1;
    }
    if (rank == 0)
        printf("late_finalize: rank 0 left MPI_Finalize after %.1f s, once rank %d had entered "
               "it after %d s\n", waited, late, secs);
    return 0;
}
