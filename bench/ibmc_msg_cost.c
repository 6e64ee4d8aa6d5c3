/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* What one message costs the sending or the receiving CPU, in instructions.
 *
 *   ibmc_msg_cost send SIZE [ITERS]
 *   ibmc_msg_cost recv SIZE [ITERS] [SLEEP_US]
 *
 * The calls to count go through functions of this program (measured_send,
 * measured_irecv, measured_wait), so that running the job under
 * `valgrind --tool=callgrind --toggle-collect=<function>` counts exactly the
 * instructions spent inside them: the MPI library, the verbs provider and
 * libc, not the kernel (bench/msg-cost.sh does this).  Unlike a time, the
 * count does not depend on how busy the (emulated) machine is, so it compares
 * two builds or two MPIs even in the noisy VM.
 *
 * send: two ranks ping-pong SIZE bytes, ITERS (default 1000) round trips
 *   after 200 warm-up ones (connections up, credits flowing); rank 0 makes
 *   each measured MPI_Send through measured_send().  The ping-pong is also
 *   what bench/msg-cost.sh runs under strace to count system calls.
 * recv: per message (ITERS, default 200, after 50 warm-up ones) rank 1 posts
 *   MPI_Irecv through measured_irecv(), tells rank 0 to send, sleeps SLEEP_US
 *   microseconds (default 20000) without entering MPI, and completes the
 *   receive with MPI_Wait through measured_wait().  The message arrives
 *   during the sleep, so the count is what a posted receive costs: posting
 *   it, then one progress pass that finds the packet, matches it, copies the
 *   data and completes the request (and reaps the completion of rank 1's own
 *   one-byte "go" send, a few dozen instructions), but not the time spent
 *   waiting for the wire.  A sleep too short for the message would show as a
 *   count that grows with the size and falls when the sleep is lengthened.
 *
 * The counts are dumped by a callgrind client request before MPI_Finalize,
 * so an MPI that crashes in MPI_Finalize (stock ch4:ofi sometimes does in
 * this VM, 2026-11-23 to 2026-11-25) still leaves them.  The receiving rank checks
 * every message bit-exact; rank 0 prints "send-cost: SIZE ITERS ok" or
 * "recv-cost: SIZE ITERS ok", and the program exits non-zero on a wrong
 * byte. */

#define _POSIX_C_SOURCE 200809L     /* nanosleep under -std=c11 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_DUMP_STATS_AT
#define CALLGRIND_DUMP_STATS_AT(s) ((void) (s))
#endif

/* Neither inlined nor left by a tail jump into MPI (the empty asm after the
 * call), so that callgrind sees the MPI call inside and can switch
 * collection on and off at these functions. */
__attribute__((noinline, noipa))
int measured_send(const void *buf, int n, int peer)
{
    int rc = MPI_Send(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    __asm__ volatile ("":::"memory");
    return rc;
}

__attribute__((noinline, noipa))
int measured_irecv(void *buf, int n, int peer, MPI_Request * req)
{
    int rc = MPI_Irecv(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, req);
    __asm__ volatile ("":::"memory");
    return rc;
}

__attribute__((noinline, noipa))
int measured_wait(MPI_Request * req)
{
    int rc = MPI_Wait(req, MPI_STATUS_IGNORE);
    __asm__ volatile ("":::"memory");
    return rc;
}

static unsigned char pattern(long i, long iter)
{
    return (unsigned char) (i * 31 + iter);
}

static void fill(unsigned char *buf, long n, long iter)
{
    for (long i = 0; i < n; i++)
        buf[i] = pattern(i, iter);
}

/* 0 if buf holds message iter, else 1 (and says where it is wrong) */
static int check(const unsigned char *buf, long n, long iter)
{
    for (long i = 0; i < n; i++)
        if (buf[i] != pattern(i, iter)) {
            fprintf(stderr, "msg-cost: message %ld byte %ld is wrong\n", iter, i);
            return 1;
        }
    return 0;
}

static int send_side(int rank, unsigned char *buf, long n, long iters)
{
    const long warmup = 200;
    int bad = 0;
    for (long it = 0; it < warmup + iters; it++) {
        if (rank == 0) {
            fill(buf, n, it);
            if (it >= warmup)
                measured_send(buf, (int) n, 1);
            else
                MPI_Send(buf, (int) n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, (int) n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int) n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bad = bad || check(buf, n, it);
            MPI_Send(buf, (int) n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    return bad;
}

static int recv_side(int rank, unsigned char *buf, long n, long iters, long sleep_us)
{
    const long warmup = 50;
    int bad = 0;
    char go = 0;
    for (long it = 0; it < warmup + iters; it++) {
        if (rank == 0) {
            MPI_Recv(&go, 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            fill(buf, n, it);
            MPI_Send(buf, (int) n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            continue;
        }
        MPI_Request req;
        memset(buf, 0, (size_t) n);
        if (it >= warmup)
            measured_irecv(buf, (int) n, 0, &req);
        else
            MPI_Irecv(buf, (int) n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &req);
        MPI_Send(&go, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        struct timespec nap = { sleep_us / 1000000, sleep_us % 1000000 * 1000 };
        while (nanosleep(&nap, &nap))   /* interrupted: sleep the rest */
            ;
        if (it >= warmup)
            measured_wait(&req);
        else
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        bad = bad || check(buf, n, it);
    }
    return bad;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *side = argc > 1 ? argv[1] : "";
    int is_send = !strcmp(side, "send");
    long n = argc > 2 ? strtol(argv[2], NULL, 10) : -1;
    long iters = argc > 3 ? strtol(argv[3], NULL, 10) : is_send ? 1000 : 200;
    long sleep_us = argc > 4 ? strtol(argv[4], NULL, 10) : 20000;
    if (size != 2 || (!is_send && strcmp(side, "recv")) || n < 0 || n > (1 << 24) ||
        iters < 1 || sleep_us < 0 || sleep_us > 10000000) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 ibmc_msg_cost send|recv SIZE [ITERS] [SLEEP_US] "
                    "(0 <= SIZE <= 16 MiB, ITERS >= 1, 0 <= SLEEP_US <= 10 s)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned char *buf = calloc((size_t) n + 1, 1);
    int bad = is_send ? send_side(rank, buf, n, iters) : recv_side(rank, buf, n, iters, sleep_us);
    CALLGRIND_DUMP_STATS_AT("measured");
    int any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("%s-cost: %ld %ld ok\n", side, n, iters);
    free(buf);
    MPI_Finalize();
    return any;
}
