/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Which path did a message take?  Read ch4:ibmc's MPI_T performance
 * variables around single sends between two ranks on different (pretend)
 * nodes, with the default CVARs, and check:
 *   - 4 MiB: no eager packet on either side, one rendezvous, the receiver's
 *     RDMA READs moved exactly 4 MiB straight into the user buffer (no
 *     bounce), the data arrived bit-exact;
 *   - 64 B: exactly one eager packet each way of the counters, no rendezvous,
 *     its send header compacted (also by MPI_Ssend, whose completion needs
 *     the request the compact header carries) unless
 *     MPIR_CVAR_IBMC_COMPACT_SEND_HEADER is false; MPI_Send's, not MPI_Ssend's,
 *     sent without an MPIDIG request unless that or
 *     MPIR_CVAR_IBMC_LIGHTWEIGHT_SEND is false;
 *   - 16 KiB, the eager limit: still one eager packet (the buffers are sized
 *     for it); one byte more: rendezvous;
 *   - 256 messages of 64 B streamed at a receiver that is not polling: the
 *     sender waits for credits at least once, and the receiver then grows
 *     its window (lends credits), all messages bit-exact;
 *   - one RC connection per rank: the only peer it used.
 * Run with 2 ranks and MPIR_CVAR_NUM_CLIQUES=2 (test/fabric/cases.txt). */

#define _DEFAULT_SOURCE /* usleep */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { EAGER_SENT, EAGER_RECVD, RNDV_SENDS, RNDV_RECVS, PACKED, READS, READ_BYTES, CONNS,
    STALLS, LENDS, COMPACT, LIGHT, WINDOWS, NVARS
};
static const char *names[NVARS] = {
    "ibmc_eager_pkts_sent", "ibmc_eager_pkts_recvd", "ibmc_rndv_sends", "ibmc_rndv_recvs",
    "ibmc_rndv_packed_recvs", "ibmc_rdma_reads", "ibmc_rdma_read_bytes", "ibmc_rc_connections",
    "ibmc_credit_stalls", "ibmc_credit_lends", "ibmc_compact_send_hdrs",
    "ibmc_lightweight_sends", "ibmc_rndv_windows"
};

static MPI_T_pvar_session session;
static MPI_T_pvar_handle handles[NVARS];
static int rank, failures;

static void read_all(unsigned long long *v)
{
    for (int i = 0; i < NVARS; i++)
        MPI_T_pvar_read(session, handles[i], &v[i]);
}

static void expect(const char *what, unsigned long long got, unsigned long long lo,
                   unsigned long long hi)
{
    if (got < lo || got > hi) {
        printf("pvars: FAIL: rank %d: %s is %llu, expected %llu..%llu\n", rank, what, got, lo, hi);
        failures++;
    }
}

/* one message of n bytes from rank 0 to rank 1 (MPI_Ssend if sync); d[]
 * gets the counter deltas */
static void transfer(size_t n, int sync, unsigned long long *d)
{
    unsigned long long before[NVARS], after[NVARS];
    unsigned char *buf = malloc(n);
    for (size_t i = 0; i < n; i++)
        buf[i] = rank == 0 ? (unsigned char) (i * 131 + 7) : 0;
    /* Each rank's counter window must hold this message and nothing else.
     * Eager packets arrive unasked and one completion-queue poll can take
     * several, so a barrier is not enough: rank 0 sends nothing until rank 1
     * has read its counters ("go"), and nothing more until rank 1 has read
     * them again ("done"). */
    if (rank == 1) {
        read_all(before);
        MPI_Send(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        MPI_Recv(buf, (int) n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        read_all(after);
        MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    } else {
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        read_all(before);
        if (sync)
            MPI_Ssend(buf, (int) n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        else
            MPI_Send(buf, (int) n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        read_all(after);
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < NVARS; i++)
        d[i] = after[i] - before[i];
    if (rank == 1) {
        for (size_t i = 0; i < n; i++)
            if (buf[i] != (unsigned char) (i * 131 + 7)) {
                printf("pvars: FAIL: byte %zu of %zu is wrong\n", i, n);
                failures++;
                break;
            }
    }
    printf("pvars: rank %d, %zu B %s%s: eager_pkts_sent +%llu eager_pkts_recvd +%llu "
           "rndv_sends +%llu rndv_recvs +%llu rndv_packed_recvs +%llu rdma_reads +%llu "
           "rdma_read_bytes +%llu compact_send_hdrs +%llu lightweight_sends +%llu\n", rank, n,
           rank == 0 ? "send" : "receive", sync ? " (ssend)" : "", d[EAGER_SENT],
           d[EAGER_RECVD], d[RNDV_SENDS], d[RNDV_RECVS], d[PACKED], d[READS], d[READ_BYTES],
           d[COMPACT], d[LIGHT]);
    free(buf);
}

/* Rank 0 streams `n` messages of 64 B while rank 1 sleeps before receiving
 * them, so rank 0 runs out of credits; counters fenced as in transfer(). */
static void stream(int n, unsigned long long *d)
{
    unsigned long long before[NVARS], after[NVARS];
    unsigned char (*msgs)[64] = malloc((size_t) n * 64);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * n);
    MPI_Status *sts = malloc(sizeof(MPI_Status) * n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 64; j++)
            msgs[i][j] = rank == 0 ? (unsigned char) (i * 7 + j) : 0;
    if (rank == 1) {
        read_all(before);
        MPI_Send(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        usleep(300 * 1000);     /* no progress: rank 0 uses up its window */
        for (int i = 0; i < n; i++)
            MPI_Irecv(msgs[i], 64, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &reqs[i]);
        MPI_Waitall(n, reqs, sts);
        read_all(after);
        MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < 64; j++)
                if (msgs[i][j] != (unsigned char) (i * 7 + j)) {
                    printf("pvars: FAIL: streamed message %d byte %d is wrong\n", i, j);
                    failures++;
                    i = n;
                    break;
                }
    } else {
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        read_all(before);
        for (int i = 0; i < n; i++)
            MPI_Isend(msgs[i], 64, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &reqs[i]);
        MPI_Waitall(n, reqs, sts);
        read_all(after);
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < NVARS; i++)
        d[i] = after[i] - before[i];
    printf("pvars: rank %d, %d x 64 B streamed: eager_pkts_sent +%llu eager_pkts_recvd +%llu "
           "credit_stalls +%llu credit_lends +%llu lightweight_sends +%llu\n", rank, n,
           d[EAGER_SENT], d[EAGER_RECVD], d[STALLS], d[LENDS], d[LIGHT]);
    free(sts);
    free(reqs);
    free(msgs);
}

/* a boolean CVAR as MPICH parsed it, through MPI_T */
static int bool_cvar(const char *name)
{
    int idx, count, val = -1;
    MPI_T_cvar_handle h;
    if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS ||
        MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS || count != 1) {
        printf("pvars: FAIL: rank %d: no MPI_T control variable %s\n", rank, name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_T_cvar_read(h, &val);
    MPI_T_cvar_handle_free(&h);
    return val != 0;
}

int main(int argc, char **argv)
{
    int provided, size, count;
    unsigned long long d[NVARS], conns;
    const size_t big = 4 << 20;

    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            printf("pvars: FAIL: run with 2 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* the suite runs this with the CVARs at their defaults and each at 0, and
     * checks these lines, so an ignored setting cannot pass as the other case;
     * requestless sends use the compact header, so they need both */
    const int compact = bool_cvar("MPIR_CVAR_IBMC_COMPACT_SEND_HEADER");
    const int light = compact && bool_cvar("MPIR_CVAR_IBMC_LIGHTWEIGHT_SEND");
    if (rank == 0) {
        printf("pvars: compact send headers %s\n", compact ? "on" : "off");
        printf("pvars: lightweight sends %s\n", light ? "on" : "off");
    }
    MPI_T_pvar_session_create(&session);
    for (int i = 0; i < NVARS; i++) {
        int idx;
        if (MPI_T_pvar_get_index(names[i], MPI_T_PVAR_CLASS_COUNTER, &idx) != MPI_SUCCESS ||
            MPI_T_pvar_handle_alloc(session, idx, NULL, &handles[i], &count) != MPI_SUCCESS ||
            count != 1) {
            printf("pvars: FAIL: rank %d: no MPI_T counter %s\n", rank, names[i]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }

    transfer(big, 0, d);
    if (rank == 0) {
        expect("eager packets sent for the 4 MiB message", d[EAGER_SENT], 0, 0);
        expect("compact send headers for the 4 MiB message", d[COMPACT], 0, 0);
        expect("lightweight sends for the 4 MiB message", d[LIGHT], 0, 0);
        expect("rendezvous sends", d[RNDV_SENDS], 1, 1);
        /* the receiver read through a window bound for this one transfer
         * (the test fabric, rxe, has type 2 memory windows) */
        const char *w = getenv("MPIR_CVAR_IBMC_RNDV_WINDOW");
        int windows = !(w && (!strcmp(w, "0") || !strcmp(w, "false")));
        expect("memory windows bound for the 4 MiB message", d[WINDOWS], windows, windows);
    } else {
        expect("eager packets received for the 4 MiB message", d[EAGER_RECVD], 0, 0);
        expect("rendezvous receives", d[RNDV_RECVS], 1, 1);
        expect("rendezvous receives through a bounce buffer", d[PACKED], 0, 0);
        expect("RDMA READ work requests", d[READS], 1, big);
        expect("RDMA READ bytes", d[READ_BYTES], big, big);
    }

    for (int sync = 0; sync <= 1; sync++) {
        transfer(64, sync, d);
        if (rank == 0) {
            expect("eager packets sent for 64 B", d[EAGER_SENT], 1, 1);
            expect("rendezvous sends for 64 B", d[RNDV_SENDS], 0, 0);
            expect("compact send headers for 64 B", d[COMPACT], compact, compact);
            /* MPI_Ssend needs its request back for the acknowledgement */
            expect("lightweight sends for 64 B", d[LIGHT], sync ? 0 : light, sync ? 0 : light);
        } else {
            expect("eager packets received for 64 B", d[EAGER_RECVD], 1, 1);
            expect("RDMA READ bytes for 64 B", d[READ_BYTES], 0, 0);
            /* rank 1 sent its empty "go" message in this window, and for
             * MPI_Ssend also the acknowledgement, which is another handler's */
            expect("compact send headers of rank 1 (the \"go\" message)", d[COMPACT], compact,
                   compact);
            expect("lightweight sends of rank 1 (the \"go\" message)", d[LIGHT], light, light);
        }
    }

    transfer(16384, 0, d);
    if (rank == 0) {
        expect("eager packets sent for 16 KiB (the eager limit)", d[EAGER_SENT], 1, 1);
        expect("compact send headers for 16 KiB", d[COMPACT], compact, compact);
        expect("lightweight sends for 16 KiB", d[LIGHT], light, light);
        expect("rendezvous sends for 16 KiB", d[RNDV_SENDS], 0, 0);
    } else {
        expect("eager packets received for 16 KiB", d[EAGER_RECVD], 1, 1);
    }
    transfer(16385, 0, d);
    if (rank == 0) {
        expect("rendezvous sends for 16 KiB + 1", d[RNDV_SENDS], 1, 1);
        expect("lightweight sends for 16 KiB + 1", d[LIGHT], 0, 0);
    }
    else
        expect("rendezvous receives for 16 KiB + 1", d[RNDV_RECVS], 1, 1);

    stream(256, d);
    if (rank == 0) {
        expect("eager packets sent for 256 x 64 B", d[EAGER_SENT], 256, 256);
        /* the ones that waited for credits went through the send queue */
        expect("compact send headers for 256 x 64 B", d[COMPACT], 256 * compact, 256 * compact);
        expect("sends that waited for credits", d[STALLS], 1, 256);
        /* until the window ran out; the rest waited in the send queue */
        expect("lightweight sends of 256 x 64 B", d[LIGHT], light, 255 * light);
    } else {
        expect("eager packets received for 256 x 64 B", d[EAGER_RECVD], 256, 256);
        /* default window 16, at most 64: grown 1 to 3 times */
        expect("windows lent to the streaming peer", d[LENDS], 1, 3);
    }

    MPI_T_pvar_read(session, handles[CONNS], &conns);
    expect("RC connections", conns, 1, 1);

    for (int i = 0; i < NVARS; i++)
        MPI_T_pvar_handle_free(session, &handles[i]);
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();

    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("pvars: all checks passed\n");
    MPI_Finalize();
    return all != 0;
}
