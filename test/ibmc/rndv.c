/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The rendezvous protocol and its registration cache, end to end.  Rank 0
 * sends, rank 1 receives (run them on different pretend nodes); every
 * transfer is checked byte for byte.  The cases are the ones that break a
 * zero-copy protocol: receives posted before and after the data arrives,
 * truncation, non-contiguous buffers on either side, synchronous and
 * matched-probe receives, and, for the cache, buffers that are reused,
 * freed and reallocated, reallocated in place and moved, and unmapped and
 * mapped again at the same address with other contents.
 *
 * With MPIR_CVAR_IBMC_STATS=1 the netmod's counters show which path ran;
 * test/ibmc/check_rndv.py checks them against what this program prints.
 *
 * usage: rndv [BYTES]   (default 1 MiB; above MPIR_CVAR_IBMC_EAGER_LIMIT) */

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int rank, failures;
static size_t nbytes = 1 << 20;

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char) ((i * 131 + seed * 7919 + (i >> 12)) & 0xff);
}

static void check(const char *what, const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char want = (unsigned char) ((i * 131 + seed * 7919 + (i >> 12)) & 0xff);
        if (p[i] != want) {
            printf("rndv: FAIL %s: byte %zu is %u, expected %u\n", what, i, p[i], want);
            failures++;
            return;
        }
    }
}

/* One transfer 0 -> 1 of n bytes from sbuf into rbuf, receive posted first. */
static void xfer(const char *what, unsigned char *sbuf, unsigned char *rbuf, size_t n,
                 unsigned seed)
{
    if (rank == 0) {
        fill(sbuf, n, seed);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Send(sbuf, (int) n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
    } else {
        MPI_Request r;
        memset(rbuf, 0, n);
        MPI_Irecv(rbuf, (int) n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &r);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        check(what, rbuf, n, seed);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int size, checks = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        nbytes = strtoul(argv[1], NULL, 0);
    if (size != 2) {
        if (rank == 0)
            printf("rndv: needs exactly 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unsigned char *sbuf = malloc(nbytes), *rbuf = malloc(nbytes);

    /* 1. expected receive */
    xfer("expected", sbuf, rbuf, nbytes, 1), checks++;

    /* 2. unexpected: the data is announced before the receive exists */
    if (rank == 0) {
        fill(sbuf, nbytes, 2);
        MPI_Send(sbuf, (int) nbytes, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
    } else {
        int flag = 0;
        MPI_Status st;
        while (!flag)
            MPI_Iprobe(0, 2, MPI_COMM_WORLD, &flag, &st);
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if ((size_t) count != nbytes)
            printf("rndv: FAIL probe count %d, expected %zu\n", count, nbytes), failures++;
        memset(rbuf, 0, nbytes);
        MPI_Recv(rbuf, (int) nbytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check("unexpected", rbuf, nbytes, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD), checks++;

    /* 3. truncation: MPI_ERR_TRUNCATE, and no byte past the buffer written */
    if (rank == 0) {
        fill(sbuf, nbytes, 3);
        MPI_Send(sbuf, (int) nbytes, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
    } else {
        MPI_Status st;
        size_t half = nbytes / 2;
        memset(rbuf, 0xee, nbytes);
        int rc = MPI_Recv(rbuf, (int) half, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &st);
        int cls = -1;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_TRUNCATE)
            printf("rndv: FAIL truncation returned class %d, expected MPI_ERR_TRUNCATE\n", cls),
                failures++;
        check("truncated prefix", rbuf, half, 3);
        if (rbuf[half] != 0xee)
            printf("rndv: FAIL truncation wrote past the buffer\n"), failures++;
    }
    MPI_Barrier(MPI_COMM_WORLD), checks++;

    /* 4. contiguous send into a strided receive (bounce buffer), and
     * 5. strided send (MPIDIG's handshake, packed) into a contiguous receive */
    {
        int nblk = (int) (nbytes / 64);
        MPI_Datatype vec;
        MPI_Type_vector(nblk, 32, 64, MPI_BYTE, &vec);
        MPI_Type_commit(&vec);
        size_t packed = (size_t) nblk * 32;
        unsigned char *strided = malloc(nbytes), *tmp = malloc(packed);
        if (rank == 0) {
            fill(sbuf, packed, 4);
            MPI_Send(sbuf, (int) packed, MPI_BYTE, 1, 4, MPI_COMM_WORLD);
            fill(tmp, packed, 5);
            for (int b = 0; b < nblk; b++)
                memcpy(strided + (size_t) b * 64, tmp + (size_t) b * 32, 32);
            MPI_Send(strided, 1, vec, 1, 5, MPI_COMM_WORLD);
        } else {
            memset(strided, 0, nbytes);
            MPI_Recv(strided, 1, vec, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int b = 0; b < nblk; b++)
                memcpy(tmp + (size_t) b * 32, strided + (size_t) b * 64, 32);
            check("strided receive", tmp, packed, 4);
            memset(rbuf, 0, packed);
            MPI_Recv(rbuf, (int) packed, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check("strided send", rbuf, packed, 5);
        }
        free(strided);
        free(tmp);
        MPI_Type_free(&vec);
        MPI_Barrier(MPI_COMM_WORLD), checks += 2;
    }

    /* 6. synchronous send, 7. matched probe, 8. any source */
    if (rank == 0) {
        fill(sbuf, nbytes, 6);
        MPI_Ssend(sbuf, (int) nbytes, MPI_BYTE, 1, 6, MPI_COMM_WORLD);
        fill(sbuf, nbytes, 7);
        MPI_Send(sbuf, (int) nbytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
        fill(sbuf, nbytes, 8);
        MPI_Send(sbuf, (int) nbytes, MPI_BYTE, 1, 8, MPI_COMM_WORLD);
    } else {
        MPI_Message msg;
        MPI_Recv(rbuf, (int) nbytes, MPI_BYTE, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check("ssend", rbuf, nbytes, 6);
        MPI_Mprobe(0, 7, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE);
        memset(rbuf, 0, nbytes);
        MPI_Mrecv(rbuf, (int) nbytes, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        check("mprobe/mrecv", rbuf, nbytes, 7);
        memset(rbuf, 0, nbytes);
        MPI_Recv(rbuf, (int) nbytes, MPI_BYTE, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        check("any source", rbuf, nbytes, 8);
    }
    MPI_Barrier(MPI_COMM_WORLD), checks += 3;

    /* 9. the same buffers ten times: the registration cache must hit */
    for (unsigned i = 0; i < 10; i++)
        xfer("reuse", sbuf, rbuf, nbytes, 100 + i);
    checks++;
    if (rank == 0)
        printf("rndv: reuse-loop 10\n");

    /* 10. free + malloc: likely the same address, new contents */
    for (unsigned i = 0; i < 5; i++) {
        free(sbuf);
        free(rbuf);
        sbuf = malloc(nbytes);
        rbuf = malloc(nbytes);
        xfer("free+malloc", sbuf, rbuf, nbytes, 200 + i);
    }
    checks++;

    /* 11. realloc: grow (may move), shrink in place */
    sbuf = realloc(sbuf, 2 * nbytes);
    rbuf = realloc(rbuf, 2 * nbytes);
    xfer("realloc grow", sbuf, rbuf, 2 * nbytes, 300);
    sbuf = realloc(sbuf, nbytes / 2);
    rbuf = realloc(rbuf, nbytes / 2);
    xfer("realloc shrink", sbuf, rbuf, nbytes / 2, 301);
    checks += 2;

    /* 12. munmap + mmap at the same address with other contents */
    {
        void *a = mmap(NULL, nbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        void *b = mmap(NULL, nbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        xfer("mmap", a, b, nbytes, 400);
        for (unsigned i = 0; i < 3; i++) {
            munmap(a, nbytes);
            munmap(b, nbytes);
            void *a2 = mmap(a, nbytes, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
            void *b2 = mmap(b, nbytes, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
            if (a2 != a || b2 != b)
                printf("rndv: FAIL mmap did not reuse the address\n"), failures++;
            xfer("munmap+mmap same address", a, b, nbytes, 401 + i);
        }
        munmap(a, nbytes);
        munmap(b, nbytes);
        checks++;
    }

    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all == 0)
            printf("rndv: all %d checks passed, %zu bytes each\n", checks, nbytes);
        else
            printf("rndv: %d failures\n", all);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return all != 0;
}
