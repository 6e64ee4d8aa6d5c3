/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Both of ibmc's collectives at once under MPI_THREAD_MULTIPLE: each of
 * NTHREADS threads alternates MPI_Allgather and MPI_Bcast on a communicator
 * of its own (a duplicate of MPI_COMM_WORLD), so the node segments and the
 * multicast channels of several communicators are set up and used at the
 * same time, and each communicator carries both.  Run with
 * MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=ibmc_node_rd and
 * MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast on several pretend nodes.
 * Every byte is checked; prints "coll_threads: all checks passed" with the
 * calls that went over the segments and over multicast, both of which must
 * be more than zero, and no fallback. */

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpit_pvar.h"

#define NTHREADS 3
#define ROUNDS 40
#define MAXLEN 6000

static MPI_Comm comms[NTHREADS];
static int errors[NTHREADS];

static unsigned char byte_of(int t, int k, int r, size_t i)
{
    return (unsigned char) (t * 101 + k * 7 + r * 13 + i * 3);
}

static void fail(int t, const char *what, int k, int r, size_t i)
{
    if (errors[t]++ < 3)
        fprintf(stderr, "coll_threads: FAIL: thread %d, %s round %d, rank %d's byte %zu\n", t,
                what, k, r, i);
}

static void *worker(void *arg)
{
    int t = (int) (intptr_t) arg, rank, size;
    MPI_Comm_rank(comms[t], &rank);
    MPI_Comm_size(comms[t], &size);
    unsigned char *send = malloc(MAXLEN), *recv = malloc((size_t) MAXLEN * size);
    for (int k = 0; k < ROUNDS; k++) {
        size_t len = (size_t) (1 + (k * 997 + t * 131) % MAXLEN);
        for (size_t i = 0; i < len; i++)
            send[i] = byte_of(t, k, rank, i);
        MPI_Allgather(send, (int) len, MPI_BYTE, recv, (int) len, MPI_BYTE, comms[t]);
        for (int r = 0; r < size; r++)
            for (size_t i = 0; i < len; i++)
                if (recv[len * r + i] != byte_of(t, k, r, i)) {
                    fail(t, "allgather", k, r, i);
                    break;
                }
        int root = (k + t) % size;
        for (size_t i = 0; i < len; i++)
            send[i] = rank == root ? byte_of(t, k, root, i) : 0;
        MPI_Bcast(send, (int) len, MPI_BYTE, root, comms[t]);
        for (size_t i = 0; i < len; i++)
            if (send[i] != byte_of(t, k, root, i)) {
                fail(t, "bcast", k, root, i);
                break;
            }
    }
    free(send);
    free(recv);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided != MPI_THREAD_MULTIPLE) {
        printf("coll_threads: FAIL: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int t = 0; t < NTHREADS; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *) (intptr_t) t);
    int bad = 0;
    for (int t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
        bad += errors[t];
        MPI_Comm_free(&comms[t]);
    }

    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    int found;
    unsigned long long v[4] = {
        mpit_pvar_read("ibmc_node_rd_allgathers", &found),
        mpit_pvar_read("ibmc_mcast_bcasts", &found),
        mpit_pvar_read("ibmc_node_rd_fallbacks", &found),
        mpit_pvar_read("ibmc_mcast_fallbacks", &found)
    }, tot[4];
    MPI_T_finalize();
    int all_bad;
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(v, tot, 4, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    int ok = !all_bad && tot[0] > 0 && tot[1] > 0 && tot[2] == 0 && tot[3] == 0;
    if (rank == 0) {
        if (!ok)
            printf("coll_threads: FAIL: %d wrong results; %llu allgathers over the segments, "
                   "%llu broadcasts over multicast, %llu and %llu fallbacks\n", all_bad, tot[0],
                   tot[1], tot[2], tot[3]);
        else
            printf("coll_threads: all checks passed: %d threads x %d allgathers and broadcasts "
                   "on their own communicators; %llu allgather and %llu multicast broadcast "
                   "participations\n", NTHREADS, ROUNDS, tot[0], tot[1]);
    }
    MPI_Finalize();
    return !ok;
}
