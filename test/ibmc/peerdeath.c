/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* A peer dies: rank 1 kills itself with SIGKILL after the ranks have
 * connected, and rank 0 keeps sending to it.  Run under
 * `mpiexec -disable-auto-cleanup`, each rank wrapped in a shell, so that
 * hydra does not kill rank 0 first (test/fabric/cases.txt says why): the
 * point is what ibmc does.  Rank 0 must not hang and must not report
 * success; it must abort with an error that names rank 1 and the verbs
 * completion status (test/fabric/cases.txt checks the message). */

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1 << 20;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *buf = calloc(1, n);

    /* connect the pair, then make sure both got here */
    if (rank == 0) {
        MPI_Send(buf, 1, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, 1, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Recv(buf, 1, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, 1, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        printf("peerdeath: rank 1 dies now\n");
        fflush(stdout);
        kill(getpid(), SIGKILL);
    }
    if (rank == 0) {
        sleep(1);
        for (int i = 0; i < 100; i++)
            MPI_Send(buf, (int) n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        printf("peerdeath: FAIL: 100 sends to a dead peer reported success\n");
    }
    MPI_Finalize();
    return 0;
}
