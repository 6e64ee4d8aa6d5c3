/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Concurrent broadcasts under MPI_THREAD_MULTIPLE: each of NTHREADS threads
 * broadcasts on a communicator of its own (a duplicate of MPI_COMM_WORLD),
 * so the multicast channels of several communicators are set up and used at
 * once.  Run with MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast on several
 * pretend nodes.  Every byte is checked; prints
 * "bcast_mcast_threads: all checks passed" and the multicast broadcasts
 * counted, which must be more than zero. */

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpit_pvar.h"

#define NTHREADS 3
#define ROUNDS 60

static MPI_Comm comms[NTHREADS];
static int errors[NTHREADS];

static unsigned char byte_of(int t, int k, size_t i)
{
    return (unsigned char) (t * 101 + k * 7 + i * 3);
}

static void *worker(void *arg)
{
    int t = (int) (intptr_t) arg, rank, size;
    MPI_Comm_rank(comms[t], &rank);
    MPI_Comm_size(comms[t], &size);
    unsigned char *buf = malloc(20000);
    for (int k = 0; k < ROUNDS; k++) {
        size_t len = (size_t) (1 + (k * 997 + t * 131) % 20000);
        int root = (k + t) % size;
        for (size_t i = 0; i < len; i++)
            buf[i] = rank == root ? byte_of(t, k, i) : 0;
        MPI_Bcast(buf, (int) len, MPI_BYTE, root, comms[t]);
        for (size_t i = 0; i < len; i++)
            if (buf[i] != byte_of(t, k, i)) {
                if (errors[t]++ < 3)
                    fprintf(stderr, "bcast_mcast_threads: FAIL: thread %d round %d byte %zu\n",
                            t, k, i);
                break;
            }
    }
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided != MPI_THREAD_MULTIPLE) {
        printf("bcast_mcast_threads: FAIL: MPI_THREAD_MULTIPLE not provided\n");
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

    /* how many broadcasts went over multicast, across the job */
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    int found;
    unsigned long long v = mpit_pvar_read("ibmc_mcast_bcasts", &found), tot = 0;
    MPI_T_finalize();
    int all_bad;
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&v, &tot, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all_bad || tot == 0)
            printf("bcast_mcast_threads: FAIL: %d wrong broadcasts, %llu over multicast\n",
                   all_bad, tot);
        else
            printf("bcast_mcast_threads: all checks passed: %d threads x %d broadcasts on their "
                   "own communicators, %llu multicast broadcast participations\n", NTHREADS,
                   ROUNDS, tot);
    }
    MPI_Finalize();
    return all_bad || tot == 0;
}
