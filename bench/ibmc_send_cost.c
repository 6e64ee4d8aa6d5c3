/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* What one MPI_Send costs the sending CPU, in instructions.
 *
 *   ibmc_send_cost SIZE [ITERS]
 *
 * Two ranks ping-pong SIZE bytes: ITERS timed round trips after 200 warm-up
 * ones (connections up, credits flowing).  Rank 0 makes each measured
 * MPI_Send through measured_send(), a function of its own, so that running
 * the job under `valgrind --tool=callgrind --toggle-collect=measured_send`
 * counts exactly the instructions spent inside those calls: the MPI library,
 * the verbs provider and libc, not the kernel (bench/send-cost.sh does this).
 * Unlike a time, the count does not depend on how busy the (emulated)
 * machine is, so it compares two builds or two MPIs even in the noisy VM.
 * Rank 1 checks every message bit-exact; the program prints
 * "send-cost: SIZE ITERS ok" and exits non-zero on a wrong byte. */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Neither inlined nor left by a tail jump into MPI_Send (the empty asm after
 * the call), so that callgrind sees the call to MPI_Send inside it and can
 * switch collection on and off at it. */
__attribute__((noinline, noipa))
int measured_send(const void *buf, int n, int peer)
{
    int rc = MPI_Send(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    __asm__ volatile ("":::"memory");
    return rc;
}

static void fill(unsigned char *buf, int n, int iter)
{
    for (int i = 0; i < n; i++)
        buf[i] = (unsigned char) (i * 31 + iter);
}

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : -1;
    long iters = argc > 2 ? strtol(argv[2], NULL, 10) : 1000;
    if (size != 2 || n < 0 || n > (1 << 24) || iters < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 ibmc_send_cost SIZE [ITERS] "
                    "(0 <= SIZE <= 16 MiB, ITERS >= 1)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned char *buf = malloc((size_t) n + 1);
    const int warmup = 200;
    for (long it = 0; it < warmup + iters; it++) {
        if (rank == 0) {
            fill(buf, (int) n, (int) it);
            if (it >= warmup)
                measured_send(buf, (int) n, 1);
            else
                MPI_Send(buf, (int) n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, (int) n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int) n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (long i = 0; i < n && !bad; i++)
                if (buf[i] != (unsigned char) (i * 31 + it)) {
                    fprintf(stderr, "send-cost: message %ld byte %ld is wrong\n", it, i);
                    bad = 1;
                }
            MPI_Send(buf, (int) n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    int any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("send-cost: %ld %ld ok\n", n, iters);
    free(buf);
    MPI_Finalize();
    return any;
}
