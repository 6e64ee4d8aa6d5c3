/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Every rank exchanges messages of 1 B to MAX bytes (doubling) with every
 * other rank and checks every byte; then a strided (non-contiguous) datatype
 * round.  Prints the layout and one line per size.  Exit status 0 only if all
 * bytes arrived intact.
 *
 *   exchange [MAX_BYTES]      (default 4 MiB) */

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pattern(int src, int dst, size_t size, size_t i)
{
    uint64_t x = (uint64_t) src * 1000003u + (uint64_t) dst * 7919u + size * 31u + i;
    x ^= x >> 13;
    x *= 0x9E3779B97F4A7C15ull;
    return (unsigned char) (x >> 56);
}

int main(int argc, char **argv)
{
    int rank, size, errors = 0;
    size_t max = argc > 1 ? strtoul(argv[1], NULL, 0) : (4u << 20);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* which (pretend) node am I on: the world rank of my node's first process */
    MPI_Comm node;
    int node_rank, leader = rank, nnodes;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    MPI_Bcast(&leader, 1, MPI_INT, 0, node);
    int is_leader = node_rank == 0;
    MPI_Allreduce(&is_leader, &nnodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("exchange: rank %d node-of %d\n", rank, leader);
    fflush(stdout);

    unsigned char *sbuf = malloc(max), *rbuf = malloc(max);
    if (!sbuf || !rbuf)
        MPI_Abort(MPI_COMM_WORLD, 2);

    for (size_t n = 1; n <= max; n *= 2) {
        int bad = 0;
        double t0 = MPI_Wtime();
        for (int k = 1; k < size; k++) {
            int to = (rank + k) % size, from = (rank - k + size) % size;
            for (size_t i = 0; i < n; i++)
                sbuf[i] = pattern(rank, to, n, i);
            memset(rbuf, 0, n);
            MPI_Sendrecv(sbuf, (int) n, MPI_BYTE, to, (int) k, rbuf, (int) n, MPI_BYTE, from,
                         (int) k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t i = 0; i < n; i++) {
                if (rbuf[i] != pattern(from, rank, n, i)) {
                    if (bad++ < 3)
                        fprintf(stderr, "exchange: rank %d: byte %zu of %zu from %d is wrong\n",
                                rank, i, n, from);
                }
            }
        }
        double dt = MPI_Wtime() - t0;
        int all_bad;
        MPI_Reduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("exchange: %8zu bytes x %d peers: %s (%.1f ms)\n", n, size - 1,
                   all_bad ? "CORRUPT" : "ok", dt * 1e3);
        errors += bad;
    }

    /* a vector type forces the packing path on both sides */
    int count = (int) (max / 16 > 0 ? max / 16 : 1);
    MPI_Datatype vec;
    MPI_Type_vector(count, 4, 8, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    int to = (rank + 1) % size, from = (rank - 1 + size) % size, bad = 0;
    for (size_t i = 0; i < (size_t) count * 8 && i < max; i++)
        sbuf[i] = pattern(rank, to, 0, i);
    memset(rbuf, 0, max);
    MPI_Sendrecv(sbuf, 1, vec, to, 99, rbuf, 1, vec, from, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (size_t b = 0; b < (size_t) count; b++)
        for (size_t j = 0; j < 4; j++)
            if (rbuf[b * 8 + j] != pattern(from, rank, 0, b * 8 + j))
                bad++;
    errors += bad;
    MPI_Type_free(&vec);

    int total;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("exchange: %d ranks on %d nodes, 1 B to %zu B with every peer, strided %d x 4 B: %s\n",
               size, nnodes, max, count, total ? "FAILED" : "all bytes verified");
    free(sbuf);
    free(rbuf);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return total ? 1 : 0;
}
