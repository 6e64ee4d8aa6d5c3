/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* A member dies in the middle of a run of multicast broadcasts.  Run with
 * MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast, one rank per pretend node,
 * each rank wrapped in a shell that outlives a killed rank, so that hydra
 * sees no process die and what ends the job is ibmc (test/fabric/cases.txt).
 *
 * After the channel is up, the last rank kills itself with SIGKILL and rank
 * 0 goes on broadcasting.  The root's window fills with packets the dead
 * rank never acknowledges.  Nobody may hang and nobody may report success:
 * the root must end the job with an error naming the dead rank. */

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;
    char buf[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* the channel up and every member through its first broadcasts */
    for (int i = 0; i < 20; i++) {
        memset(buf, rank == 0 ? i : -1, sizeof(buf));
        MPI_Bcast(buf, (int) sizeof(buf), MPI_BYTE, 0, MPI_COMM_WORLD);
        if (buf[0] != (char) i || buf[63] != (char) i) {
            printf("bcast_peerdeath: FAIL: rank %d got %d in broadcast %d\n", rank, buf[0], i);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1) {
        printf("bcast_peerdeath: rank %d dies now\n", rank);
        fflush(stdout);
        kill(getpid(), SIGKILL);
    }
    sleep(1);
    for (int i = 0; i < 100000; i++)
        MPI_Bcast(buf, (int) sizeof(buf), MPI_BYTE, 0, MPI_COMM_WORLD);
    printf("bcast_peerdeath: FAIL: rank %d finished 100000 broadcasts with a dead member\n", rank);
    MPI_Finalize();
    return 0;
}
