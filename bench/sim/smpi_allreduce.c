/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* smpi_allreduce: the point-to-point baselines of ibmc_mcast's MPI_Allreduce
 * (a reduce to rank 0, then the result by multicast) and MPI_Barrier
 * (arrivals up a tree to rank 0, then a release by multicast) under
 * SimGrid's SMPI, on the platform ibmc_sim writes (--platform-out);
 * project-allreduce.sh and project-barrier.sh run it.
 *
 *   smpi_allreduce allreduce|reduce|knomial:R|barrier SIZE K [SETTLE_US]
 *       K times: barrier; rank 0 takes the time, adds SETTLE_US (default
 *       50) and broadcasts that instant; every rank waits until it
 *       (smpi_execute), so all start together as after ibmc_sim's ideal
 *       barrier; then MPI_Allreduce, MPI_Reduce to rank 0, or the reduce
 *       step of ibmc_mcast's allreduce (knomial:R: up the k-nomial tree of
 *       radix R of src/mpi/coll/ibmc/ibmc_knomial.h, each parent posting
 *       all its children's receives at once, as the algorithm does) of
 *       SIZE bytes of doubles, MPI_SUM.  Latency of call k: for allreduce
 *       the last rank's end, for a reduce rank 0's end (where the result
 *       is, and the multicast would start), less the common start.
 *       Prints mean_lat_us, the mean over the K calls.
 *       barrier: MPI_Barrier, the last rank's end (SIZE ignored).
 *
 * MPI_Allreduce, MPI_Reduce and MPI_Barrier run SMPI's choice under
 * --cfg=smpi/allreduce:..., --cfg=smpi/reduce:... and --cfg=smpi/barrier:...  Every figure printed
 * is SIMULATED.  Every result is checked exactly (sums of small
 * integers). */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <smpi/smpi.h>
#include "smpi_args.h"
#include "ibmc_knomial.h"

/* ibmc_mcast's reduce step (allreduce_intra_ibmc_mcast.c, reduce_knomial)
 * on MPI_DOUBLE sums: the same tree, the same order of posting and
 * combining */
static void reduce_knomial(const double *in, double *out, int n, int radix, MPI_Comm comm)
{
    int rank, np;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &np);
    int maxc = ibmc_knomial_max_children(np, radix);
    int *ch = malloc(sizeof(int) * (size_t) (maxc > 0 ? maxc : 1));
    int nc = ibmc_knomial_children(rank, np, radix, ch, maxc);
    int parent = ibmc_knomial_parent(rank, np, radix);
    if (nc == 0) {
        MPI_Send(in, n, MPI_DOUBLE, parent, 0, comm);
        free(ch);
        return;
    }
    double *mem = malloc(sizeof(double) * (size_t) n * (size_t) (nc + 1));
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t) nc);
    for (int i = 0; i < nc; i++)
        MPI_Irecv(mem + (size_t) (i + 1) * n, n, MPI_DOUBLE, ch[i], 0, comm, &reqs[i]);
    double *acc = mem;
    memcpy(acc, in, sizeof(double) * (size_t) n);
    MPI_Waitall(nc, reqs, MPI_STATUSES_IGNORE);
    for (int i = 0; i < nc; i++) {
        double *child = mem + (size_t) (i + 1) * n;
        MPI_Reduce_local(acc, child, n, MPI_DOUBLE, MPI_SUM);
        acc = child;
    }
    if (rank == 0)
        memcpy(out, acc, sizeof(double) * (size_t) n);
    else
        MPI_Send(acc, n, MPI_DOUBLE, parent, 0, comm);
    free(mem);
    free(reqs);
    free(ch);
}

int main(int argc, char *argv[])
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    argc = smpi_positional_args(argc, argv);
    int radix = argc >= 2 && !strncmp(argv[1], "knomial:", 8) ? atoi(argv[1] + 8) : 0;
    int barrier = argc >= 2 && !strcmp(argv[1], "barrier");
    if (argc < 4 || (strcmp(argv[1], "allreduce") && strcmp(argv[1], "reduce") && radix < 2 &&
                     !barrier)) {
        if (!rank)
            fprintf(stderr, "usage: smpi_allreduce allreduce|reduce|knomial:R|barrier "
                    "SIZE K [SETTLE_US]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int all = !strcmp(argv[1], "allreduce") || barrier, sync = barrier;
    int n = (int) (strtoull(argv[2], NULL, 0) / sizeof(double));
    if (n < 1)
        n = 1;
    int K = atoi(argv[3]);
    double settle = (argc > 4 ? atof(argv[4]) : 50) * 1e-6;
    double *in = malloc(sizeof(double) * (size_t) n), *out = malloc(sizeof(double) * (size_t) n);
    long bad = 0;
    double sum = 0;
    for (int k = 0; k < K; k++) {
        for (int i = 0; i < n; i++) {
            in[i] = (double) ((rank + i + k) % 7);
            out[i] = -1;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime() + settle;
        MPI_Bcast(&start, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        double now = MPI_Wtime();
        if (now > start) {
            fprintf(stderr, "smpi_allreduce: rank %d reached the start %.3f us late: raise "
                    "SETTLE_US\n", rank, (now - start) * 1e6);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        smpi_execute(start - now);
        if (barrier)
            MPI_Barrier(MPI_COMM_WORLD);
        else if (all)
            MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        else if (radix)
            reduce_knomial(in, out, n, radix, MPI_COMM_WORLD);
        else
            MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        double end = MPI_Wtime(), last;
        MPI_Reduce(&end, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
            sum += (all ? last : end) - start;
        if (!sync && (all || rank == 0))
            for (int i = 0; i < n; i++) {
                double w = 0;
                for (int r = 0; r < np; r++)
                    w += (double) ((r + i + k) % 7);
                bad += out[i] != w;
            }
    }
    long bad_all = 0;
    MPI_Reduce(&bad, &bad_all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("SIMULATED smpi_allreduce %s ranks=%d size=%zu calls=%d mean_lat_us=%.3f "
               "result=%s\n", argv[1], np, sync ? 0 : sizeof(double) * (size_t) n, K, sum / K * 1e6,
               bad_all ? "FAIL" : "ok");
    free(in);
    free(out);
    MPI_Finalize();
    return bad_all ? 1 : 0;
}
