/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* MPI_Allgather over ibmc's node-shared segments, checked from the outside:
 * run with MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=ibmc_node_rd on several
 * pretend nodes.
 *
 * Gathers 1 B .. MAX bytes per rank (default 256 KiB) on MPI_COMM_WORLD, on
 * a communicator of the odd and even ranks in reverse order, and with
 * MPI_IN_PLACE, strided (non-contiguous) receive and send types and MPI_INT; each
 * size several times in a row (calls alternate the segments' halves), each
 * with other data; then a loop of back-to-back 4 KiB calls whose MPI_T
 * counters it reads.  Every byte on every rank is checked.  With --bcast it
 * also alternates MPI_Bcast and MPI_Allgather on one communicator.
 * With --expect:
 *   segments  the segments were used: every call counted, nothing fell back,
 *             no eager RC packet sent during the counted loop, and the
 *             node leaders' RDMA writes per call as the plan says
 *             (nodes x log2(nodes) for a power of two of nodes);
 *   fallback  they were not used, and every call counted a fallback;
 *   shared    the segments were used with every round shared (run with
 *             MPIR_CVAR_IBMC_NODE_RD_SHARE_MIN=1, equal processes per node
 *             for the flag count): each of the min(processes, 8) sharers of
 *             a node wrote one flag per round, at least the plan's data
 *             writes, no eager RC packet;
 *   mcast     the segments were used and blocks went between nodes by
 *             multicast (run with MPIR_CVAR_IBMC_NODE_RD_MCAST_MIN at most
 *             4096): each leader took part in one multicast broadcast per
 *             node per call, and no RDMA write or flag was posted; with
 *             MPIR_CVAR_IBMC_MCAST_FAULTS dropping packets, some broadcast
 *             needed a recovery.
 * --watch-shm: a thread of rank 0 watches /dev/shm while communicators are
 * created and used, and checks that every ibmc segment it sees is mode 0600;
 * after MPI_Finalize, none is left.  --abort: rank 0 calls MPI_Abort after
 * the first call (the test script checks /dev/shm afterwards).  --first N:
 * the first call gathers N bytes per rank (so that the segment is made for
 * that size, for example one too large to register).
 * Prints "allgather_node: all checks passed" on success. */

#include <mpi.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "mpit_pvar.h"

static int fails;

static unsigned char byte_of(int iter, int rank, size_t i)
{
    return (unsigned char) (iter * 11 + rank * 29 + i * 7 + (i >> 8));
}

static void report(const char *what, int iter, size_t len, int from, size_t i, unsigned v,
                   unsigned want)
{
    if (fails++ < 5)
        fprintf(stderr, "allgather_node: FAIL: %s, iteration %d, %zu bytes per rank: byte %zu "
                "of rank %d's block is %u, expected %u\n", what, iter, len, i, from, v, want);
}

/* contiguous bytes, optionally in place */
static void check_bytes(MPI_Comm comm, int iter, size_t len, int in_place, unsigned char *send,
                        unsigned char *recv)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    memset(recv, 0xee, len * size);
    unsigned char *mine = in_place ? recv + len * rank : send;
    for (size_t i = 0; i < len; i++)
        mine[i] = byte_of(iter, rank, i);
    MPI_Allgather(in_place ? MPI_IN_PLACE : send, (int) len, MPI_BYTE, recv, (int) len,
                  MPI_BYTE, comm);
    for (int r = 0; r < size; r++)
        for (size_t i = 0; i < len; i++)
            if (recv[len * r + i] != byte_of(iter, r, i))
                report(in_place ? "in place" : "bytes", iter, len, r, i, recv[len * r + i],
                       byte_of(iter, r, i));
}

/* ints sent contiguous, received every other int (a vector type) */
static void check_strided(MPI_Comm comm, int iter, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Datatype vec, rvec;
    MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint) sizeof(int) * 2 * n, &rvec);
    MPI_Type_commit(&rvec);
    int *send = malloc(sizeof(int) * n), *recv = malloc(sizeof(int) * 2 * n * size);
    for (int i = 0; i < n; i++)
        send[i] = iter * 1000003 + rank * 7919 + i;
    for (int i = 0; i < 2 * n * size; i++)
        recv[i] = -1;
    MPI_Allgather(send, n, MPI_INT, recv, 1, rvec, comm);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) {
            int want = iter * 1000003 + r * 7919 + i;
            if (recv[2 * n * r + 2 * i] != want || recv[2 * n * r + 2 * i + 1] != -1)
                report("strided", iter, (size_t) n * sizeof(int), r, (size_t) i,
                       (unsigned) recv[2 * n * r + 2 * i], (unsigned) want);
        }
    MPI_Type_free(&vec);
    MPI_Type_free(&rvec);
    free(send);
    free(recv);
}

/* doubles sent from every third one (a vector type), received contiguous */
static void check_strided_send(MPI_Comm comm, int iter, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Datatype vec;
    MPI_Type_vector(n, 1, 3, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    double *send = malloc(sizeof(double) * 3 * n), *recv = malloc(sizeof(double) * n * size);
    for (int i = 0; i < 3 * n; i++)
        send[i] = i % 3 ? -1.0 : iter * 1e6 + rank * 1e3 + i / 3;
    MPI_Allgather(send, 1, vec, recv, n, MPI_DOUBLE, comm);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) {
            double want = iter * 1e6 + r * 1e3 + i;
            if (recv[n * r + i] != want)
                report("strided send", iter, (size_t) n * sizeof(double), r, (size_t) i,
                       (unsigned) recv[n * r + i], (unsigned) want);
        }
    MPI_Type_free(&vec);
    free(send);
    free(recv);
}

static void sweep(MPI_Comm comm, size_t max, unsigned char *send, unsigned char *recv)
{
    static int iter;
    for (size_t len = 1; len <= max; len = len < 8 ? len + 3 : len * 4 + 5) {
        for (int rep = 0; rep < 3; rep++)
            check_bytes(comm, iter++, len, rep == 2, send, recv);
        check_strided(comm, iter++, (int) (len / sizeof(int) + 1));
        check_strided_send(comm, iter++, (int) (len / sizeof(double) + 1));
    }
}

/* ---- /dev/shm watcher ---- */

static volatile int watching;
static int seen, seen_bad;

static void *watch(void *arg)
{
    (void) arg;
    while (watching) {
        DIR *d = opendir("/dev/shm");
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (strncmp(e->d_name, "ibmc-", 5))
                continue;
            char path[512];
            struct stat sb;
            snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
            if (stat(path, &sb) == 0) {
                seen++;
                if ((sb.st_mode & 0777) != 0600) {
                    seen_bad++;
                    fprintf(stderr, "allgather_node: FAIL: %s has mode %o\n", path,
                            sb.st_mode & 0777);
                }
            }
        }
        if (d)
            closedir(d);
    }
    return NULL;
}

static int shm_left(void)
{
    int n = 0;
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, "ibmc-", 5)) {
            fprintf(stderr, "allgather_node: left behind: /dev/shm/%s\n", e->d_name);
            n++;
        }
    if (d)
        closedir(d);
    return n;
}

/* the data writes and flag writes the plan makes per call (ibmc_noderd.h):
 * doublings among the P core nodes, and for each of the N - P others one
 * write in and two back, each round's data followed by one flag */
static void plan_writes(int nodes, int *writes, int *flags)
{
    int P = 1, L = 0;
    while (P * 2 <= nodes) {
        P *= 2;
        L++;
    }
    int extra = nodes - P;
    *writes = P * L + 3 * extra;
    *flags = P * L + 2 * extra;
}

int main(int argc, char **argv)
{
    const char *expect = NULL;
    size_t max = 256 * 1024, first = 0;
    int with_bcast = 0, watch_shm = 0, do_abort = 0, provided;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--expect") && i + 1 < argc)
            expect = argv[++i];
        else if (!strcmp(argv[i], "--max") && i + 1 < argc)
            max = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--bcast"))
            with_bcast = 1;
        else if (!strcmp(argv[i], "--watch-shm"))
            watch_shm = 1;
        else if (!strcmp(argv[i], "--abort"))
            do_abort = 1;
        else if (!strcmp(argv[i], "--first") && i + 1 < argc)
            first = strtoull(argv[++i], NULL, 0);
    }
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t room = max < 4096 ? 4096 : max;     /* the counted loop's calls are 4 KiB */
    room = room < first ? first : room;
    unsigned char *send = malloc(room), *recv = malloc(room * size);

    pthread_t watcher;
    if (watch_shm && rank == 0) {
        watching = 1;
        pthread_create(&watcher, NULL, watch, NULL);
    }
    if (first)
        check_bytes(MPI_COMM_WORLD, 77, first, 0, send, recv);
    if (do_abort) {
        check_bytes(MPI_COMM_WORLD, 0, 64, 0, send, recv);
        if (rank == 0)
            MPI_Abort(MPI_COMM_WORLD, 3);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (watch_shm) {
        /* many setups, each a short window in which the file exists */
        for (int i = 0; i < 40; i++) {
            MPI_Comm dup;
            MPI_Comm_dup(MPI_COMM_WORLD, &dup);
            check_bytes(dup, i, 16, 0, send, recv);
            MPI_Comm_free(&dup);
        }
    }

    sweep(MPI_COMM_WORLD, max, send, recv);
    /* odd ranks first, in reverse: nodes' ranks are neither consecutive nor
     * in node order */
    MPI_Comm other;
    MPI_Comm_split(MPI_COMM_WORLD, 0, (rank % 2 ? 0 : size) + (size - rank), &other);
    sweep(other, max / 4, send, recv);
    if (with_bcast) {
        for (int i = 0; i < 20; i++) {
            unsigned char b[300];
            int orank;
            MPI_Comm_rank(other, &orank);
            for (int k = 0; k < 300; k++)
                b[k] = orank == i % size ? (unsigned char) (i + k) : 0;
            MPI_Bcast(b, 300, MPI_BYTE, i % size, other);
            for (int k = 0; k < 300; k++)
                if (b[k] != (unsigned char) (i + k))
                    report("bcast between allgathers", i, 300, i % size, (size_t) k, b[k],
                           (unsigned char) (i + k));
            check_bytes(other, 5000 + i, 1000 + i, i % 2, send, recv);
        }
    }
    MPI_Comm_free(&other);

    /* the counted loop: nothing but allgathers between the two readings */
    int found, loops = 50;
    const char *names[] = { "ibmc_node_rd_allgathers", "ibmc_node_rd_writes",
        "ibmc_node_rd_fallbacks", "ibmc_eager_pkts_sent", "ibmc_node_rd_flag_writes",
        "ibmc_node_rd_mcast_bcasts", "ibmc_mcast_pkts_sent"
    };
    enum { NCOUNT = sizeof(names) / sizeof(names[0]) };
    unsigned long long before[NCOUNT], after[NCOUNT], delta[NCOUNT], sum[NCOUNT];
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < NCOUNT; k++)
        before[k] = mpit_pvar_read(names[k], &found);
    for (int i = 0; i < loops; i++)
        check_bytes(MPI_COMM_WORLD, 9000 + i, 4096, 0, send, recv);
    for (int k = 0; k < NCOUNT; k++) {
        after[k] = mpit_pvar_read(names[k], &found);
        delta[k] = after[k] - before[k];
    }
    MPI_Reduce(delta, sum, NCOUNT, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    unsigned long long eager_max;
    MPI_Reduce(&delta[3], &eager_max, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);

    /* with losses injected, the channel must have recovered some */
    unsigned long long recoveries = mpit_pvar_read("ibmc_mcast_recoveries", &found), all_rec;
    MPI_Reduce(&recoveries, &all_rec, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    const char *faults = getenv("MPIR_CVAR_IBMC_MCAST_FAULTS");
    int lossy = faults && strstr(faults, "drop=") && !strstr(faults, "drop=0,");

    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nrank, leaders, is_leader;
    MPI_Comm_rank(node, &nrank);
    is_leader = nrank == 0;
    MPI_Allreduce(&is_leader, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_free(&node);

    printf("allgather_node: rank %d: %llu allgathers, %llu writes, %llu flag writes, %llu "
           "multicast broadcasts (%llu packets), %llu fallbacks, %llu eager packets in the "
           "counted loop\n", rank, delta[0], delta[1], delta[4], delta[5], delta[6], delta[2],
           delta[3]);
    fflush(stdout);
    if (rank == 0 && expect) {
        int want, want_flags;
        plan_writes(leaders, &want, &want_flags);
        printf("allgather_node: %d nodes: %.2f data and %.2f flag RDMA writes per call (plan: "
               "%d and %d), %.2f node broadcasts by multicast per call, %llu eager packets at "
               "most per rank\n", leaders, (double) sum[1] / loops, (double) sum[4] / loops,
               want, want_flags, (double) sum[5] / loops, eager_max);
        if (!strcmp(expect, "segments")) {
            if (sum[0] != (unsigned long long) loops * size) {
                fprintf(stderr, "allgather_node: FAIL: %llu calls counted, expected %d\n",
                        sum[0], loops * size);
                fails++;
            }
            if (sum[2] != 0) {
                fprintf(stderr, "allgather_node: FAIL: %llu fallbacks\n", sum[2]);
                fails++;
            }
            if (sum[1] != (unsigned long long) want * loops ||
                sum[4] != (unsigned long long) want_flags * loops) {
                fprintf(stderr, "allgather_node: FAIL: %llu data and %llu flag writes in %d "
                        "calls, the plan makes %d and %d per call\n", sum[1], sum[4], loops,
                        want, want_flags);
                fails++;
            }
            if (eager_max != 0) {
                fprintf(stderr, "allgather_node: FAIL: %llu eager RC packets during the "
                        "counted allgathers\n", eager_max);
                fails++;
            }
        } else if (!strcmp(expect, "shared")) {
            int ppn = size / leaders, sharers = ppn < 8 ? ppn : 8;
            if (sum[0] != (unsigned long long) loops * size || sum[2] != 0) {
                fprintf(stderr, "allgather_node: FAIL: %llu calls counted (expected %d), %llu "
                        "fallbacks\n", sum[0], loops * size, sum[2]);
                fails++;
            }
            if (size % leaders == 0 &&
                sum[4] != (unsigned long long) want_flags * sharers * loops) {
                fprintf(stderr, "allgather_node: FAIL: %llu flag writes in %d calls; %d sharers "
                        "per node make %d per call\n", sum[4], loops, sharers,
                        want_flags * sharers);
                fails++;
            }
            if (sum[1] < (unsigned long long) want * loops || eager_max != 0) {
                fprintf(stderr, "allgather_node: FAIL: %llu data writes (the plan makes at least "
                        "%d per call), %llu eager RC packets\n", sum[1], want, eager_max);
                fails++;
            }
        } else if (!strcmp(expect, "mcast")) {
            unsigned long long want_bc = (unsigned long long) leaders * leaders * loops;
            if (sum[0] != (unsigned long long) loops * size || sum[2] != 0) {
                fprintf(stderr, "allgather_node: FAIL: %llu calls counted (expected %d), %llu "
                        "fallbacks\n", sum[0], loops * size, sum[2]);
                fails++;
            }
            if (sum[5] != want_bc || sum[6] < (unsigned long long) leaders * loops) {
                fprintf(stderr, "allgather_node: FAIL: %llu node broadcasts by multicast and "
                        "%llu multicast packets in %d calls; expected %llu broadcasts (each "
                        "of %d leaders takes part in one per node) and at least one packet "
                        "per node per call\n", sum[5], sum[6], loops, want_bc, leaders);
                fails++;
            }
            if (lossy && all_rec == 0) {
                fprintf(stderr, "allgather_node: FAIL: losses were injected (%s) and no "
                        "multicast broadcast needed a recovery\n", faults);
                fails++;
            }
            printf("allgather_node: %llu multicast broadcasts recovered lost packets\n",
                   all_rec);
            if (sum[1] != 0 || sum[4] != 0) {
                fprintf(stderr, "allgather_node: FAIL: %llu data and %llu flag RDMA writes by "
                        "a call that moves blocks by multicast\n", sum[1], sum[4]);
                fails++;
            }
        } else if (!strcmp(expect, "fallback")) {
            if (sum[0] != 0 || sum[2] < (unsigned long long) loops * size) {
                fprintf(stderr, "allgather_node: FAIL: %llu calls used the segments, %llu "
                        "fell back\n", sum[0], sum[2]);
                fails++;
            }
        } else {
            fprintf(stderr, "allgather_node: unknown --expect %s\n", expect);
            fails++;
        }
    }
    if (watch_shm && rank == 0) {
        watching = 0;
        pthread_join(watcher, NULL);
        printf("allgather_node: the watcher saw segment files %d times, %d with another mode "
               "than 0600\n", seen, seen_bad);
        fails += seen_bad;
    }
    int all_fails;
    MPI_Allreduce(&fails, &all_fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    free(send);
    free(recv);
    MPI_T_finalize();
    MPI_Finalize();
    if (watch_shm && rank == 0 && shm_left())
        all_fails++;
    if (rank == 0 && !all_fails)
        printf("allgather_node: all checks passed\n");
    return all_fails != 0;
}
