/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Broadcasts along the rows and columns of a process grid, as applications
 * do: the world is split into R rows and into C columns (MPI_Comm_split,
 * so the rows share one context id, and so do the columns), and every
 * iteration each row broadcasts, all rows at once, then each column.  Run
 * with MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast, one rank per pretend
 * node.  Every byte is checked at every rank.
 *
 * --expect=separate (the pool has room): every communicator has a group of
 * its own, so no rank receives another communicator's packet
 * (ibmc_mcast_foreign stays 0 everywhere), no channel shares a group
 * (ibmc_mcast_groups_shared 0), each rank holds 3 groups (world, its row,
 * its column; with --threads 3 or more), and every broadcast went by
 * multicast (ibmc_mcast_bcasts
 * counts them all, no fallback).
 * --expect=shared (MPIR_CVAR_IBMC_MCAST_GROUPS=1): the world holds the only
 * group; the row and column of world rank 0 share it, so the ranks outside
 * them receive their packets and drop them as foreign; the other rows and
 * columns find no group and fall back, counted.  The data is right either
 * way.
 *
 * --threads: under MPI_THREAD_MULTIPLE, one thread broadcasts along the
 * rows while another broadcasts along the columns, at once.
 *
 * usage: bcast_grid --expect=separate|shared [--threads] [--rows R] [--iters N] [BYTES] */

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpit_pvar.h"

enum { P_BCASTS, P_FALLBACKS, P_FOREIGN, P_SHARED, P_GROUPS, P_DUPLICATES, NP };
static const char *pvar_names[NP] = {
    "ibmc_mcast_bcasts", "ibmc_mcast_fallbacks", "ibmc_mcast_foreign",
    "ibmc_mcast_groups_shared", "ibmc_mcast_groups", "ibmc_mcast_duplicates"
};

static int read_pvars(unsigned long long *v)
{
    int missing = 0;
    for (int i = 0; i < NP; i++) {
        int found;
        v[i] = mpit_pvar_read(pvar_names[i], &found);
        if (!found) {
            printf("bcast_grid: FAIL: no MPI_T pvar %s\n", pvar_names[i]);
            missing++;
        }
    }
    return missing;
}

static unsigned char byte_of(int comm_id, long iter, size_t i)
{
    return (unsigned char) (comm_id * 131 + iter * 17 + i * 7 + 3);
}

/* One broadcast on comm from root; comm_id names the communicator. */
static int bcast_checked(MPI_Comm comm, int root, int comm_id, long iter, unsigned char *buf,
                         size_t len)
{
    int me;
    MPI_Comm_rank(comm, &me);
    for (size_t i = 0; i < len; i++)
        buf[i] = me == root ? byte_of(comm_id, iter, i) : 0;
    MPI_Bcast(buf, (int) len, MPI_BYTE, root, comm);
    for (size_t i = 0; i < len; i++)
        if (buf[i] != byte_of(comm_id, iter, i)) {
            printf("bcast_grid: FAIL: communicator %d, iteration %ld, byte %zu: %u, not %u\n",
                   comm_id, iter, i, buf[i], byte_of(comm_id, iter, i));
            return 1;
        }
    return 0;
}

/* One thread's broadcasts: iters on comm (id first_id + index), roots
 * rotating over its n members. */
typedef struct {
    MPI_Comm comm;
    int id, n, fails;
    long iters;
    size_t len;
} stream_t;

static void *stream_run(void *arg)
{
    stream_t *s = arg;
    unsigned char *buf = malloc(s->len);
    for (long i = 0; i < s->iters && !s->fails; i++)
        s->fails += bcast_checked(s->comm, (int) (i % s->n), s->id, i, buf, s->len);
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, size, provided, fails = 0, rows = 2, shared = -1, threads = 0;
    long iters = 200;
    size_t len = 4096;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--expect=separate"))
            shared = 0;
        else if (!strcmp(argv[i], "--expect=shared"))
            shared = 1;
        else if (!strcmp(argv[i], "--threads"))
            threads = 1;
        else if (!strcmp(argv[i], "--rows") && i + 1 < argc)
            rows = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = strtol(argv[++i], NULL, 0);
        else if (argv[i][0] != '-')
            len = strtoul(argv[i], NULL, 0);
        else
            shared = -2;
    }
    MPI_Init_thread(&argc, &argv, threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                    &provided);
    if (threads && provided < MPI_THREAD_MULTIPLE) {
        printf("bcast_grid: FAIL: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (shared < 0 || rows < 2 || size % rows || size / rows < 2) {
        if (!rank)
            printf("usage: bcast_grid --expect=separate|shared [--rows R] [--iters N] [BYTES]; "
                   "R >= 2 must divide the %d processes into rows of 2 or more\n", size);
        MPI_Finalize();
        return 2;
    }
    int cols = size / rows, row = rank / cols, col = rank % cols;
    unsigned char *buf = malloc(len);
    unsigned long long v0[NP], v1[NP];
    fails += read_pvars(v0);

    MPI_Comm row_comm, col_comm;
    MPI_Comm_split(MPI_COMM_WORLD, row, rank, &row_comm);
    MPI_Comm_split(MPI_COMM_WORLD, col, rank, &col_comm);
    /* ids of the communicators in the data: world 0, rows 1.., columns after */
    fails += bcast_checked(MPI_COMM_WORLD, 0, 0, 0, buf, len);
    stream_t rs = {.comm = row_comm,.id = 1 + row,.n = cols,.iters = iters,.len = len };
    stream_t cs = {.comm = col_comm,.id = 1 + rows + col,.n = rows,.iters = iters,.len = len };
    if (threads) {
        pthread_t t;
        if (pthread_create(&t, NULL, stream_run, &cs)) {
            printf("bcast_grid: FAIL: pthread_create\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        stream_run(&rs);
        pthread_join(t, NULL);
        fails += rs.fails + cs.fails;
    } else {
        for (long i = 0; i < iters && !fails; i++) {
            fails += bcast_checked(row_comm, (int) (i % cols), rs.id, i, buf, len);
            fails += bcast_checked(col_comm, (int) (i % rows), cs.id, i, buf, len);
        }
    }
    /* everyone's last packets are in before the counters are read */
    MPI_Barrier(MPI_COMM_WORLD);
    fails += read_pvars(v1);
    unsigned long long d[NP];
    for (int i = 0; i < NP; i++)
        d[i] = v1[i] - v0[i];
    d[P_GROUPS] = v1[P_GROUPS];

    unsigned long long want = 1 + 2 * (unsigned long long) iters;
    if (!shared) {
        if (d[P_BCASTS] != want || d[P_FALLBACKS]) {
            printf("bcast_grid: FAIL: rank %d: %llu broadcasts by multicast and %llu fallbacks, "
                   "not %llu and 0\n", rank, d[P_BCASTS], d[P_FALLBACKS], want);
            fails++;
        }
        /* with threads, the row's and the column's set-ups of world rank 0
         * run at once and may pick one group, then pick again: a member
         * keeps the first, idle and detached, as one more group held */
        if (d[P_FOREIGN] || d[P_SHARED] || d[P_GROUPS] < 3 || (!threads && d[P_GROUPS] != 3)) {
            printf("bcast_grid: FAIL: rank %d: %llu foreign packets, %llu shared groups, %llu "
                   "groups held, not 0, 0 and 3%s\n", rank, d[P_FOREIGN], d[P_SHARED],
                   d[P_GROUPS], threads ? " or more" : "");
            fails++;
        }
    } else {
        /* world rank 0's row and column share the world's group; the others
         * fall back, every member of them */
        int own = row == 0 || col == 0;
        unsigned long long want_mc = 1 + (unsigned long long) iters * ((row == 0) + (col == 0));
        if (d[P_BCASTS] != want_mc || d[P_FALLBACKS] != want - want_mc || d[P_GROUPS] != 1) {
            printf("bcast_grid: FAIL: rank %d: %llu broadcasts by multicast, %llu fallbacks, "
                   "%llu groups, not %llu, %llu and 1\n", rank, d[P_BCASTS], d[P_FALLBACKS],
                   d[P_GROUPS], want_mc, want - want_mc);
            fails++;
        }
        if (own && !d[P_SHARED]) {
            printf("bcast_grid: FAIL: rank %d: no channel counted on a shared group\n", rank);
            fails++;
        }
        /* outside row 0 and column 0, a rank gets both's packets */
        if (!own && !d[P_FOREIGN]) {
            printf("bcast_grid: FAIL: rank %d: no foreign packet, though it is on the group "
                   "of a row and a column it is not in\n", rank);
            fails++;
        }
    }
    unsigned long long sum[NP];
    MPI_Reduce(d, sum, NP, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int all_fails;
    MPI_Allreduce(&fails, &all_fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!rank) {
        printf("bcast_grid: %d x %d grid, %ld iterations of %zu B: summed over ranks, %llu "
               "broadcasts by multicast, %llu fallbacks, %llu foreign packets, %llu duplicates, "
               "%llu channels on shared groups\n", rows, cols, iters, len, sum[P_BCASTS],
               sum[P_FALLBACKS], sum[P_FOREIGN], sum[P_DUPLICATES], sum[P_SHARED]);
        if (!all_fails)
            printf("bcast_grid: all checks passed\n");
    }
    MPI_Comm_free(&row_comm);
    MPI_Comm_free(&col_comm);
    free(buf);
    MPI_T_finalize();
    MPI_Finalize();
    return all_fails ? 1 : 0;
}
