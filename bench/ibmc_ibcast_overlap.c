/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* How much of an MPI_Ibcast hides behind computation: for each size, the
 * median time of
 *   bcast  MPI_Ibcast + MPI_Wait,
 *   comp   a computation calibrated to take about as long,
 *   both   MPI_Ibcast, the computation with an MPI_Test every slice (as an
 *          application lets progress run), MPI_Wait;
 * and hidden = (bcast + comp - both) / bcast, the share of the broadcast
 * that overlapped (0: none, 1: all).  Every process times, the root is
 * rank 0, and rank 0 prints the job's slowest process per measure, since a
 * broadcast ends when the last receiver has its data.  Every byte is
 * checked.  The algorithm is MPIR_CVAR_IBCAST_INTRA_ALGORITHM's.
 *
 * usage: ibmc_ibcast_overlap [ITERS] [SIZE...]   (default 50; 1 1024 16384 65536)
 * prints: "overlap SIZE bcast_us comp_us both_us hidden" per size */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLICES 64

static volatile double sink;

/* work units of a dependent floating-point chain: not vectorised away */
static void compute(long units, MPI_Request * req)
{
    double x = 1.0;
    long per = units / SLICES + 1;
    for (int s = 0; s < SLICES; s++) {
        for (long i = 0; i < per; i++)
            x = x * 1.0000001 + 1e-9;
        if (req) {
            int flag;
            MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        }
    }
    sink = x;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 50, bad = 0;
    size_t sizes[32] = { 1, 1024, 16384, 65536 };
    int nsizes = 4;
    if (argc > 2) {
        nsizes = 0;
        for (int i = 2; i < argc && nsizes < 32; i++)
            sizes[nsizes++] = strtoul(argv[i], NULL, 0);
    }
    if (iters < 1)
        iters = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double *t = malloc(sizeof(double) * (size_t) iters);
    for (int si = 0; si < nsizes; si++) {
        size_t len = sizes[si];
        unsigned char *buf = malloc(len);
        double m[3];
        MPI_Request req;
        /* bcast alone; a few first to set the channel up */
        for (int i = -3; i < iters; i++) {
            memset(buf, rank == 0 ? (i & 0xff) : 0, len);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Ibcast(buf, (int) len, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (i >= 0)
                t[i] = MPI_Wtime() - t0;
            for (size_t b = 0; b < len; b++)
                bad += buf[b] != (unsigned char) (i & 0xff);
        }
        m[0] = median(t, iters);
        /* the computation, calibrated to the slowest process's broadcast
         * time with every process computing at once, as they will */
        double target;
        MPI_Allreduce(&m[0], &target, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        long units = 1000;
        for (;;) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            compute(units, NULL);
            double dt = MPI_Wtime() - t0, slowest;
            MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (slowest >= target || units > (1L << 40))
                break;
            units = slowest > 0 ? (long) (units * 1.2 * target / slowest) + 1 : units * 2;
        }
        for (int i = 0; i < iters; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            compute(units, NULL);
            t[i] = MPI_Wtime() - t0;
        }
        m[1] = median(t, iters);
        for (int i = 0; i < iters; i++) {
            memset(buf, rank == 0 ? ((i + 7) & 0xff) : 0, len);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Ibcast(buf, (int) len, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
            compute(units, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            t[i] = MPI_Wtime() - t0;
            for (size_t b = 0; b < len; b++)
                bad += buf[b] != (unsigned char) ((i + 7) & 0xff);
        }
        m[2] = median(t, iters);
        double worst[3];
        MPI_Reduce(m, worst, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            double hidden = (worst[0] + worst[1] - worst[2]) / worst[0];
            hidden = hidden < 0 ? 0 : hidden > 1 ? 1 : hidden;
            printf("overlap %zu %.1f %.1f %.1f %.2f\n", len, worst[0] * 1e6, worst[1] * 1e6,
                   worst[2] * 1e6, hidden);
            fflush(stdout);
        }
        free(buf);
    }
    int allbad;
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(allbad ? "overlap: FAIL: %d wrong bytes\n" : "overlap: ok, every byte checked\n",
               allbad);
    free(t);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
