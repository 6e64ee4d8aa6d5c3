/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* MPI_Bcast over ibmc's multicast channel, checked from the outside: run with
 * MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast on several pretend nodes.
 *
 * Broadcasts 0 B .. MAX bytes (default 256 KiB) from every root in turn, on
 * MPI_COMM_WORLD and on a communicator of the even ranks, plus a burst of
 * back-to-back small ones and one of a strided (non-contiguous) datatype,
 * and checks every byte on every rank.  Then it
 * reads ibmc's MPI_T counters and prints one line per rank; with --expect
 * it also checks them:
 *   mcast    the channel was used: node leaders counted broadcasts, the job
 *            posted multicast sends, and nothing fell back; roots posted
 *            several packets per ibv_post_send call and asked for fewer
 *            completions than packets;
 *   lossless as mcast, and no NAK and no retransmission: every receiver
 *            got its data by multicast, none over RC, and none asked for
 *            any (a receiver whose root is late, setting up another
 *            communicator's channel, waits for it without NAKing);
 *   recovery as mcast, and packets were lost (injected) and sent again
 *            over RC, and broadcasts counted recoveries, some of them
 *            found by a root's ACK request (a whole message lost); with
 *            --relay-repairs (every receiver a co-root,
 *            MPIR_CVAR_IBMC_MCAST_SUBGROUP=1) the relays, which every
 *            co-root gets anyway, may have repaired every loss before any
 *            NAK timer ran out, so losses and relays are required, not
 *            retransmissions or recoveries;
 *   tuned    the channel was used and nothing fell back, with no demand on
 *            batching: a selection file (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE)
 *            picks it for one-packet messages only;
 *   fallback the channel was not used, and every broadcast on a
 *            multi-node communicator counted a fallback.
 * With --coroots, channels are expected to have co-roots
 * (MPIR_CVAR_IBMC_MCAST_SUBGROUP below the number of nodes): packets were
 * relayed to them over RC and they acknowledged for their subgroups; without
 * it, neither may have happened.  With --relay-on-loss as well
 * (MPIR_CVAR_IBMC_MCAST_COROOT_RELAY=0), nothing was relayed.  lossless
 * also asks that no packet arrived twice, except as a relay.  With --ack-tree (at least four subgroups,
 * so that some co-root's parent in the relay tree is another co-root), some
 * co-roots' ACKs went to a parent co-root; without it, none did.
 * ACKs: unless --rc-acks (MPIR_CVAR_IBMC_MCAST_RDMA_ACKS=0), most of them
 * went as RDMA writes into the ACK boards, and the owners read them (a
 * co-root's ACK to a parent co-root always goes over RC); with
 * --rc-acks, none did.  With --late-acks (MPIR_CVAR_IBMC_MCAST_FAULTS with
 * late_ack), owners found words of another epoch on their boards.  With
 * --group-asks, some root asked a stalled group by one multicast packet
 * (ibmc_mcast_asks_multicast, sent inline on the multicast QP), no more
 * often than it asked at all.
 * Always: a process whose multicast QP has the device's self-loopback block
 * (ibmc_mcast_loopback_blocked) received none of its own packets
 * (ibmc_mcast_echoes).  The counters line says on how many processes the
 * block was in force, which the fabric suite checks against the device.
 * Prints "bcast_mcast: all checks passed" on success. */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpit_pvar.h"

static unsigned char byte_of(int iter, int root, size_t i)
{
    return (unsigned char) (iter * 7 + root * 31 + i * 13 + (i >> 9));
}

static int fails;

static void check_bcast(MPI_Comm comm, int iter, int root, size_t len, unsigned char *buf)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    for (size_t i = 0; i < len; i++)
        buf[i] = rank == root ? byte_of(iter, root, i) : 0xee;
    MPI_Bcast(buf, (int) len, MPI_BYTE, root, comm);
    for (size_t i = 0; i < len; i++)
        if (buf[i] != byte_of(iter, root, i)) {
            if (fails++ < 5)
                fprintf(stderr, "bcast_mcast: FAIL: iteration %d, root %d, %zu bytes: byte %zu "
                        "is %u, expected %u\n", iter, root, len, i, buf[i],
                        byte_of(iter, root, i));
            return;
        }
}

static unsigned long long pvar(const char *name)
{
    int found;
    unsigned long long v = mpit_pvar_read(name, &found);
    if (!found) {
        fprintf(stderr, "bcast_mcast: FAIL: no MPI_T pvar %s\n", name);
        fails++;
    }
    return v;
}

int main(int argc, char **argv)
{
    const char *expect = NULL;
    int coroots = 0, rc_acks = 0, late_acks = 0, ack_tree = 0, relay_repairs = 0,
        relay_on_loss = 0, group_asks = 0;
    size_t max = 256 * 1024;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--expect=", 9))
            expect = argv[i] + 9;
        else if (!strcmp(argv[i], "--coroots"))
            coroots = 1;
        else if (!strcmp(argv[i], "--rc-acks"))
            rc_acks = 1;
        else if (!strcmp(argv[i], "--ack-tree"))
            ack_tree = 1;
        else if (!strcmp(argv[i], "--relay-repairs"))
            relay_repairs = 1;
        else if (!strcmp(argv[i], "--relay-on-loss"))
            relay_on_loss = 1;
        else if (!strcmp(argv[i], "--late-acks"))
            late_acks = 1;
        else if (!strcmp(argv[i], "--group-asks"))
            group_asks = 1;
        else
            max = strtoul(argv[i], NULL, 0);
    }
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *buf = malloc(max + 1);
    MPI_Comm evens;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : 0, rank, &evens);

    unsigned long long f0 = pvar("ibmc_mcast_fallbacks");
    int iter = 0, bcasts = 0;
    for (size_t len = 0; len <= max; len = len ? len * 4 : 1) {
        for (int root = 0; root < size; root++, iter++, bcasts++)
            check_bcast(MPI_COMM_WORLD, iter, root, len, buf);
        if (evens != MPI_COMM_NULL) {
            int esize;
            MPI_Comm_size(evens, &esize);
            check_bcast(evens, iter, (iter / 3) % esize, len, buf);
        }
        /* lengths that end a fragment early and late */
        if (len > 1000 && len + 977 <= max) {
            iter++;
            bcasts++;
            check_bcast(MPI_COMM_WORLD, iter, iter % size, len + 977, buf);
        }
    }
    for (int k = 0; k < 200; k++, iter++, bcasts++)      /* back to back, one root */
        check_bcast(MPI_COMM_WORLD, iter, 0, 64, buf);

    /* a non-contiguous datatype: every other int of 3000, the gaps untouched */
    {
        const int n = 3000, root = size - 1;
        int *v = malloc(sizeof(int) * 2 * n);
        MPI_Datatype strided;
        MPI_Type_vector(n, 1, 2, MPI_INT, &strided);
        MPI_Type_commit(&strided);
        for (int i = 0; i < 2 * n; i++)
            v[i] = rank == root ? (i % 2 ? -1 : i * 7 + 1) : -2;
        MPI_Bcast(v, 1, strided, root, MPI_COMM_WORLD);
        bcasts++;
        for (int i = 0; i < 2 * n; i++) {
            int want = i % 2 ? (rank == root ? -1 : -2) : i * 7 + 1;
            if (v[i] != want) {
                if (fails++ < 5)
                    fprintf(stderr, "bcast_mcast: FAIL: strided broadcast: element %d is %d, "
                            "expected %d\n", i, v[i], want);
                break;
            }
        }
        MPI_Type_free(&strided);
        free(v);
    }
    if (evens != MPI_COMM_NULL)
        MPI_Comm_free(&evens);

#define NV 27
    unsigned long long v[NV];
    const char *names[NV] = { "ibmc_mcast_bcasts", "ibmc_mcast_pkts_sent", "ibmc_mcast_pkts_recvd",
        "ibmc_mcast_naks_sent", "ibmc_mcast_retransmits", "ibmc_mcast_fallbacks",
        "ibmc_mcast_dropped", "ibmc_mcast_faults", "ibmc_mcast_recoveries",
        "ibmc_mcast_recovery_worst_us", "ibmc_mcast_relays", "ibmc_mcast_coroot_acks",
        "ibmc_mcast_acks_sent", "ibmc_mcast_acks_written", "ibmc_mcast_acks_read",
        "ibmc_mcast_acks_foreign", "ibmc_mcast_post_calls", "ibmc_mcast_send_cqes",
        "ibmc_mcast_echoes", "ibmc_mcast_naks_spared", "ibmc_mcast_naks_premature",
        "ibmc_mcast_tree_acks", "ibmc_mcast_duplicates", "ibmc_mcast_naks_asked",
        "ibmc_mcast_ack_probes", "ibmc_mcast_asks_multicast", "ibmc_mcast_loopback_blocked"
    };
    for (int i = 0; i < NV; i++)
        v[i] = pvar(names[i]);
    /* a recovery takes time: one counted means a longest one above zero */
    if (v[8] && !v[9]) {
        fprintf(stderr, "bcast_mcast: FAIL: rank %d counted %llu recoveries, the longest 0 us\n",
                rank, v[8]);
        fails++;
    }
    if (v[26] && v[18]) {
        fprintf(stderr, "bcast_mcast: FAIL: rank %d's multicast QP blocks its own packets, but "
                "%llu came back to it\n", rank, v[18]);
        fails++;
    }
    v[5] -= f0;
    printf("bcast_mcast: rank %d bcasts %llu pkts_sent %llu pkts_recvd %llu naks %llu "
           "retransmits %llu fallbacks %llu dropped %llu faults %llu relays %llu coroot_acks "
           "%llu acks %llu written %llu read %llu post_calls %llu send_cqes %llu echoes %llu "
           "naks_spared %llu naks_premature %llu tree_acks %llu naks_asked %llu ack_probes %llu "
           "asks_multicast %llu loopback_blocked %llu\n", rank, v[0], v[1], v[2], v[3], v[4], v[5],
           v[6], v[7], v[10], v[11], v[12], v[13], v[14], v[16], v[17], v[18], v[19], v[20], v[21],
           v[23], v[24], v[25], v[26]);
    fflush(stdout);
    unsigned long long tot[NV];
    MPI_Allreduce(v, tot, NV, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    int bad = 0;
    MPI_Allreduce(&fails, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    if (rank == 0 && expect) {
        int ok = 1;
        int mcast = strcmp(expect, "fallback") != 0;
        if (mcast && (tot[0] == 0 || tot[1] == 0 || tot[5] != 0)) {
            printf("bcast_mcast: FAIL: expected multicast: %llu broadcasts, %llu sends, %llu "
                   "fallbacks\n", tot[0], tot[1], tot[5]);
            ok = 0;
        }
        /* A root posts every packet its window allows with one
         * ibv_post_send, and asks for a completion for every 16 of them:
         * with messages of several packets, fewer calls and completions
         * than packets (the routing probes, one signaled send each, add a
         * few).  A root's question to its group (ibmc_mcast_asks_multicast)
         * is one more call and one more completion each, and no data
         * packet: left out, or a run whose roots ask often would fail. */
        unsigned long long data_calls = tot[16] - tot[25], data_cqes = tot[17] - tot[25];
        if (mcast && strcmp(expect, "tuned") &&
            (tot[16] <= tot[25] || data_calls >= tot[1] || data_cqes >= tot[1])) {
            printf("bcast_mcast: FAIL: expected batched multicast sends: %llu packets, %llu "
                   "ibv_post_send calls and %llu completions, %llu of each for questions\n",
                   tot[1], tot[16], tot[17], tot[25]);
            ok = 0;
        }
        /* Without loss nobody asks for anything, and no data travels over RC. */
        if (!strcmp(expect, "lossless") && (tot[3] || tot[4])) {
            printf("bcast_mcast: FAIL: %llu NAKs and %llu retransmissions without loss\n",
                   tot[3], tot[4]);
            ok = 0;
        }
        /* Without loss or retransmission the only second copies are the
         * relays every co-root gets (MPIR_CVAR_IBMC_MCAST_COROOT_RELAY):
         * with none, no packet may arrive twice */
        int relayed = coroots && !relay_on_loss;
        if (!strcmp(expect, "lossless") && (relayed ? tot[22] > tot[10] : tot[22] != 0)) {
            printf("bcast_mcast: FAIL: %llu duplicates without loss (%llu relayed)\n", tot[22],
                   tot[10]);
            ok = 0;
        }
        if (!strcmp(expect, "recovery") &&
            (tot[7] == 0 || (relay_repairs ? tot[10] == 0 : (tot[4] == 0 || tot[8] == 0)))) {
            printf("bcast_mcast: FAIL: %llu injected losses, %llu retransmissions, %llu "
                   "broadcasts counted as recovered, %llu relayed\n", tot[7], tot[4], tot[8],
                   tot[10]);
            ok = 0;
        }
        /* Messages of one packet are lost whole, and before the first
         * recovery no member NAKs such a message on its own: the roots'
         * ACK requests must have revealed some */
        if (!strcmp(expect, "recovery") && !relay_repairs && (tot[23] == 0 || tot[24] == 0)) {
            printf("bcast_mcast: FAIL: %llu NAKs asked by a root's ACK request, %llu ACK "
                   "requests, with %llu injected losses\n", tot[23], tot[24], tot[7]);
            ok = 0;
        }
        if (group_asks && (tot[25] == 0 || tot[25] > tot[24])) {
            printf("bcast_mcast: FAIL: %llu questions to the group by multicast, of %llu ACK "
                   "requests\n", tot[25], tot[24]);
            ok = 0;
        }
        /* co-roots (--coroots: MPIR_CVAR_IBMC_MCAST_SUBGROUP below the
         * number of nodes) get every packet relayed over RC, unless
         * --relay-on-loss (MPIR_CVAR_IBMC_MCAST_COROOT_RELAY=0), and
         * acknowledge for their subgroups; without them neither happens */
        if (mcast && ((tot[10] > 0) != relayed || (tot[11] > 0) != coroots)) {
            printf("bcast_mcast: FAIL: %s co-roots%s, but %llu packets relayed to co-roots and "
                   "%llu co-root ACKs\n", coroots ? "expected" : "expected no",
                   relay_on_loss ? " relaying nothing" : "", tot[10], tot[11]);
            ok = 0;
        }
        if (mcast && (tot[21] > 0) != ack_tree) {
            printf("bcast_mcast: FAIL: %s co-roots below co-roots, but %llu ACKs to a parent "
                   "co-root\n", ack_tree ? "expected" : "expected no", tot[21]);
            ok = 0;
        }
        /* An ACK is written once the connection to its root or co-root is
         * up and has nothing queued, so all but a few of the first ones are
         * writes, except those to a parent co-root; a written ACK is read
         * at most once (later ones overwrite it). */
        if (mcast && !rc_acks && (tot[12] == 0 || 4 * tot[13] < 3 * (tot[12] - tot[21]) ||
                                  tot[14] == 0 || tot[14] > tot[13])) {
            printf("bcast_mcast: FAIL: expected ACKs by RDMA write: %llu ACKs (%llu to a parent "
                   "co-root), %llu written, %llu read\n", tot[12], tot[21], tot[13], tot[14]);
            ok = 0;
        }
        if (mcast && (tot[15] > 0) != late_acks) {
            printf("bcast_mcast: FAIL: %s late ACK writes, but %llu foreign board words\n",
                   late_acks ? "injected" : "no", tot[15]);
            ok = 0;
        }
        if (mcast && rc_acks && (tot[12] == 0 || tot[13] != 0 || tot[14] != 0)) {
            printf("bcast_mcast: FAIL: expected ACKs as RC messages: %llu ACKs, %llu written, "
                   "%llu read\n", tot[12], tot[13], tot[14]);
            ok = 0;
        }
        if (!mcast && (tot[0] != 0 || tot[5] == 0)) {
            printf("bcast_mcast: FAIL: expected fallback: %llu multicast broadcasts, %llu "
                   "fallbacks\n", tot[0], tot[5]);
            ok = 0;
        }
        if (ok)
            printf("bcast_mcast: counters as expected (%s): %llu broadcasts over multicast, "
                   "%llu sends, %llu NAKs, %llu retransmissions, %llu injected losses, "
                   "%llu recoveries, %llu relayed to co-roots, %llu co-root ACKs, %llu ACKs "
                   "(%llu written, %llu read, %llu foreign), %llu ibv_post_send calls, %llu send "
                   "completions, %llu echoes (loopback blocked on %llu of %d processes), %llu NAKs "
                   "spared, %llu premature, %llu NAKs asked by a root's ACK request, %llu ACK "
                   "requests (%llu to the group by multicast)\n",
                   expect, tot[0], tot[1], tot[3], tot[4], tot[7], tot[8], tot[10], tot[11],
                   tot[12], tot[13], tot[14], tot[15], tot[16], tot[17], tot[18], tot[26], size,
                   tot[19], tot[20], tot[23], tot[24], tot[25]);
        else
            bad++;
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0 && bad)
        printf("bcast_mcast: FAIL: %d errors in %d broadcasts\n", bad, bcasts);
    else if (rank == 0)
        printf("bcast_mcast: all checks passed (%d broadcasts, every byte checked)\n", bcasts);
    free(buf);
    MPI_T_finalize();
    MPI_Finalize();
    return bad ? 1 : 0;
}
