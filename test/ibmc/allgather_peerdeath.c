/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* A process dies in the middle of a run of ibmc_node_rd allgathers.  Run
 * with MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=ibmc_node_rd on pretend nodes,
 * each rank wrapped in a shell that outlives a killed rank, so that hydra
 * sees no process die and what ends the job is ibmc (test/fabric/cases.txt).
 *
 *   allgather_peerdeath VICTIM
 *
 * After the segments are up, rank VICTIM kills itself with SIGKILL and the
 * others go on gathering.  Its node's other processes wait for its copy-in
 * mark, other nodes for its node's data: nobody may hang and nobody may
 * report success; the job must end with an error naming the dead rank (a
 * process of its node sees its pid gone; its partner nodes' RDMA fails). */

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, victim = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *send = malloc(sizeof(int) * 16), *recv = malloc(sizeof(int) * 16 * size);

    for (int i = 0; i < 20; i++) {
        for (int k = 0; k < 16; k++)
            send[k] = rank * 100 + i;
        MPI_Allgather(send, 16, MPI_INT, recv, 16, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            if (recv[16 * r + 15] != r * 100 + i) {
                printf("allgather_peerdeath: FAIL: rank %d got %d from rank %d in call %d\n",
                       rank, recv[16 * r + 15], r, i);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == victim) {
        printf("allgather_peerdeath: rank %d dies now\n", rank);
        fflush(stdout);
        kill(getpid(), SIGKILL);
    }
    sleep(1);
    for (int i = 0; i < 100000; i++)
        MPI_Allgather(send, 16, MPI_INT, recv, 16, MPI_INT, MPI_COMM_WORLD);
    printf("allgather_peerdeath: FAIL: rank %d finished 100000 allgathers with a dead member\n",
           rank);
    MPI_Finalize();
    return 0;
}
