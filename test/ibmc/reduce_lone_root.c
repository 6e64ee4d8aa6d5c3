/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* MPI_Reduce on a communicator whose rank 0 is the only member of its node
 * while another node holds several members.  That is the layout in which
 * MPICH 4.0.2's node-aware Reduce composition (CH4 "alpha", chosen for
 * commutative ops above 2 KiB) lost rank 0's contribution
 * (upstream pmodels/mpich#6893; fixed by ibmc's patch 0003).
 *
 * The communicator is world rank 0 plus every rank on other nodes, so run
 * with at least 3 ranks on 2 or more pretend nodes, one of which (not rank
 * 0's) holds 2 ranks or more, e.g. 4 ranks with MPIR_CVAR_NUM_CLIQUES=2.
 * Sizes straddle the 2 KiB switch between the beta and alpha compositions;
 * the roots are 0 and the last rank.  Every element is checked. */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int value(int rank, int i)
{
    return rank * 7919 + i % 10007;
}

int main(int argc, char **argv)
{
    int wrank, wsize, errors = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);

    /* Which world ranks share rank 0's node? */
    MPI_Comm node;
    int on_root_node, node_size;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    int zero_here = (wrank == 0);
    MPI_Allreduce(MPI_IN_PLACE, &zero_here, 1, MPI_INT, MPI_MAX, node);
    on_root_node = zero_here;

    /* The largest node other than rank 0's must hold 2 ranks or more. */
    int other_node_size = on_root_node ? 0 : node_size, max_other;
    MPI_Allreduce(&other_node_size, &max_other, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (max_other < 2) {
        if (wrank == 0)
            fprintf(stderr, "reduce_lone_root: needs a node other than rank 0's with 2 or "
                    "more ranks (got %d ranks; set MPIR_CVAR_NUM_CLIQUES)\n", wsize);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    MPI_Comm comm;
    int in_comm = (wrank == 0 || !on_root_node);
    MPI_Comm_split(MPI_COMM_WORLD, in_comm ? 0 : MPI_UNDEFINED, wrank, &comm);

    if (in_comm) {
        int rank, size;
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        const int counts[] = { 1, 100, 513, 4096, 65536, 262144 };
        int roots[2] = { 0, size - 1 };
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            int n = counts[c];
            int *sendbuf = malloc(n * sizeof(int)), *recvbuf = malloc(n * sizeof(int));
            for (int r = 0; r < 2; r++) {
                for (int i = 0; i < n; i++) {
                    sendbuf[i] = value(rank, i);
                    recvbuf[i] = -1;
                }
                MPI_Reduce(sendbuf, recvbuf, n, MPI_INT, MPI_SUM, roots[r], comm);
                if (rank != roots[r])
                    continue;
                int bad = 0;
                for (int i = 0; i < n; i++) {
                    long expect = 0;
                    for (int k = 0; k < size; k++)
                        expect += value(k, i);
                    if (recvbuf[i] != (int) expect && bad++ < 3)
                        printf("reduce_lone_root: count %d root %d: [%d] = %d, expected %ld\n",
                               n, roots[r], i, recvbuf[i], expect);
                }
                if (bad)
                    printf("reduce_lone_root: count %d root %d: %d of %d elements wrong\n",
                           n, roots[r], bad, n);
                errors += bad;
            }
            free(sendbuf);
            free(recvbuf);
        }
        if (rank == 0)
            printf("reduce_lone_root: %d ranks, rank 0 alone on its node\n", size);
        MPI_Comm_free(&comm);
    }
    MPI_Comm_free(&node);

    int total;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0)
        printf(total ? "reduce_lone_root: %d wrong elements\n" : "reduce_lone_root: all correct\n",
               total);
    MPI_Finalize();
    return total != 0;
}
