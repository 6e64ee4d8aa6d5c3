/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Communicator churn over the multicast channel: CYCLES times, create a
 * communicator (alternately a duplicate of MPI_COMM_WORLD and a reversed
 * split of it), broadcast over multicast from a rotating root, check every
 * byte, free it; a few communicators stay alive across cycles so that
 * groups are held while others come and go.  Run with
 * MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast, one rank per pretend node.
 *
 * Checks, at every rank: the groups it holds (pvar ibmc_mcast_groups) never
 * exceed MPIR_CVAR_IBMC_MCAST_GROUPS; it has registered at most 32 ACK
 * boards (ibmc_mcast_boards), one per channel alive or retiring at once,
 * since freed communicators' boards are reused, and, when the run has 1000
 * cycles or more, at most 2 more after the first tenth than the kept
 * communicators alive since then add (a slow moment may let a few more
 * freed channels wait for their members' last ACKs at once);
 * every broadcast went over multicast
 * (ibmc_mcast_bcasts counts them, no fallback); the process's resident
 * memory after the last cycle is within 4 MiB of what it was after the
 * first tenth.
 *
 * usage: bcast_churn [CYCLES]   (default 10000) */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpit_pvar.h"

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[128];
    long kib = -1;
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmRSS:", 6))
            kib = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kib;
}

static unsigned long long pvar(const char *name, int *fails)
{
    int found;
    unsigned long long v = mpit_pvar_read(name, &found);
    if (!found) {
        printf("bcast_churn: FAIL: no MPI_T pvar %s\n", name);
        (*fails)++;
    }
    return v;
}

int main(int argc, char **argv)
{
    int rank, size, provided, fails = 0;
    long cycles = argc > 1 ? strtol(argv[1], NULL, 0) : 10000;
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *capenv = getenv("MPIR_CVAR_IBMC_MCAST_GROUPS");
    unsigned long long cap = capenv ? strtoull(capenv, NULL, 0) : 16;

    unsigned long long b0 = pvar("ibmc_mcast_bcasts", &fails);
    unsigned long long f0 = pvar("ibmc_mcast_fallbacks", &fails);
    unsigned long long most = 0;
    long rss_early = -1;
    unsigned long long boards_early = 0;
    MPI_Comm keep[3] = { MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL };
    int kept = 0, kept_early = 0, kept_most = 0;        /* kept communicators alive */
    unsigned char buf[200];
    for (long i = 0; i < cycles && !fails; i++) {
        MPI_Comm c;
        if (i % 2)
            MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &c);
        else
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
        int root = (int) (i % size), me;
        MPI_Comm_rank(c, &me);
        for (size_t j = 0; j < sizeof(buf); j++)
            buf[j] = me == root ? (unsigned char) (i * 7 + j) : 0xee;
        MPI_Bcast(buf, (int) sizeof(buf), MPI_BYTE, root, c);
        for (size_t j = 0; j < sizeof(buf); j++)
            if (buf[j] != (unsigned char) (i * 7 + j)) {
                printf("bcast_churn: FAIL: rank %d cycle %ld byte %zu is %u\n", rank, i, j, buf[j]);
                fails++;
                break;
            }
        /* every 1000th communicator replaces one of three kept alive */
        if (i % 1000 == 999) {
            int k = (int) (i / 1000) % 3;
            if (keep[k] != MPI_COMM_NULL)
                MPI_Comm_free(&keep[k]);
            else
                kept++;
            keep[k] = c;
            if (kept > kept_most)
                kept_most = kept;
        } else {
            MPI_Comm_free(&c);
        }
        unsigned long long g = pvar("ibmc_mcast_groups", &fails);
        if (g > most)
            most = g;
        if (g > cap) {
            printf("bcast_churn: FAIL: rank %d holds %llu groups at cycle %ld, cap %llu\n", rank,
                   g, i, cap);
            fails++;
        }
        if (i == cycles / 10) {
            rss_early = rss_kib();
            boards_early = pvar("ibmc_mcast_boards", &fails);
            kept_early = kept;
        }
    }
    for (int k = 0; k < 3; k++)
        if (keep[k] != MPI_COMM_NULL)
            MPI_Comm_free(&keep[k]);
    long rss_end = rss_kib();
    unsigned long long boards_end = pvar("ibmc_mcast_boards", &fails);
    /* every kept communicator alive holds its board; a leak grows past them */
    unsigned long long allowed = boards_early + 2 + (unsigned long long) (kept_most - kept_early);
    if (!fails && (boards_end > 32 || (cycles >= 1000 && boards_end > allowed))) {
        printf("bcast_churn: FAIL: rank %d has registered %llu ACK boards, %llu after the first "
               "tenth, when %d kept communicators were alive (at most %d later)\n", rank,
               boards_end, boards_early, kept_early, kept_most);
        fails++;
    }
    unsigned long long nb = pvar("ibmc_mcast_bcasts", &fails) - b0;
    unsigned long long nf = pvar("ibmc_mcast_fallbacks", &fails) - f0;
    if (!fails && (nb != (unsigned long long) cycles || nf)) {
        printf("bcast_churn: FAIL: rank %d: %llu of %ld broadcasts over multicast, %llu "
               "fallbacks\n", rank, nb, cycles, nf);
        fails++;
    }
    if (!fails && rss_early > 0 && rss_end - rss_early > 4096) {
        printf("bcast_churn: FAIL: rank %d resident memory grew from %ld KiB to %ld KiB\n", rank,
               rss_early, rss_end);
        fails++;
    }
    int bad;
    MPI_Allreduce(&fails, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    long grow = rss_end - rss_early, worst;
    MPI_Reduce(&grow, &worst, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    unsigned long long most_all;
    MPI_Reduce(&most, &most_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    unsigned long long boards_all;
    MPI_Reduce(&boards_end, &boards_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("bcast_churn: %s: %ld communicators created, broadcast over and freed on %d "
               "ranks; at most %llu groups held (cap %llu); at most %llu ACK boards registered; "
               "resident memory grew by at most %ld KiB after the first tenth\n",
               bad ? "FAIL" : "all checks passed", cycles, size, most_all, cap, boards_all, worst);
    MPI_T_finalize();
    MPI_Finalize();
    return bad ? 1 : 0;
}
