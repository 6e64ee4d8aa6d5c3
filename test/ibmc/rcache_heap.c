/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The registration cache against an application that changes its heap's
 * pages behind the cache's back, without the program break ending up
 * anywhere new (ibmc_heapwatch.h):
 *
 *   trim_threshold  mallopt(M_TRIM_THRESHOLD, 0) after MPI_Init, then free
 *                   and malloc again: the heap shrinks and grows back over
 *                   new pages
 *   malloc_trim     free, malloc_trim(0) (the freed pages are discarded),
 *                   malloc again
 *   madvise         madvise(MADV_DONTNEED) on a buffer in use, as a quick
 *                   way to zero it, then new contents
 *
 * Rank 0 sends a rendezvous-sized heap buffer to rank 1, both do the heap
 * call on their own buffer, and rank 0 sends again from the same addresses
 * with new contents.  A cache that still held the first registration would
 * move the old pages: rank 1 would see the first contents (sender side) or
 * keep the discarded pages' zeros (receiver side).  Every byte is checked.
 *
 * usage: rcache_heap MODE [BYTES]   (BYTES default 1 MiB, above the eager limit) */

#define _GNU_SOURCE
#include <malloc.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int rank;

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char) ((i * 131 + seed * 7919 + (i >> 12)) & 0xff);
}

static int check(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char want = (unsigned char) ((i * 131 + seed * 7919 + (i >> 12)) & 0xff);
        if (p[i] != want) {
            printf("rcache_heap: FAIL transfer %u: byte %zu is %u, expected %u\n", seed, i, p[i],
                   want);
            return 1;
        }
    }
    return 0;
}

static int xfer(unsigned char *buf, size_t n, unsigned seed)
{
    int bad = 0;
    if (rank == 0) {
        fill(buf, n, seed);
        MPI_Send(buf, (int) n, MPI_BYTE, 1, (int) seed, MPI_COMM_WORLD);
    } else {
        memset(buf, 0xee, n);
        MPI_Recv(buf, (int) n, MPI_BYTE, 0, (int) seed, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad = check(buf, n, seed);
    }
    return bad;
}

int main(int argc, char **argv)
{
    int size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
    size_t n = argc > 2 ? strtoul(argv[2], NULL, 0) : 1 << 20;
    if (size != 2 || (strcmp(mode, "trim_threshold") && strcmp(mode, "malloc_trim") &&
                      strcmp(mode, "madvise"))) {
        if (rank == 0)
            printf("usage: rcache_heap trim_threshold|malloc_trim|madvise [BYTES], 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long page = sysconf(_SC_PAGESIZE);

    /* the buffer in the brk heap (the cache keeps malloc from using mmap);
     * a small block after it keeps it off the heap's top for malloc_trim,
     * which discards free pages in the middle */
    unsigned char *buf = malloc(n + (size_t) page), *guard = NULL;
    if (strcmp(mode, "trim_threshold"))
        guard = malloc(64);
    uintptr_t before = (uintptr_t) buf;
    bad |= xfer(buf, n, 1);

    if (!strcmp(mode, "trim_threshold")) {
        mallopt(M_TRIM_THRESHOLD, 0);
        free(buf);
        buf = malloc(n + (size_t) page);
    } else if (!strcmp(mode, "malloc_trim")) {
        free(buf);
        malloc_trim(0);
        buf = malloc(n + (size_t) page);
    } else {
        uintptr_t a = ((uintptr_t) buf + (uintptr_t) page - 1) & ~(uintptr_t) (page - 1);
        if (madvise((void *) a, n - (size_t) page, MADV_DONTNEED))
            perror("rcache_heap: madvise"), bad = 1;
    }
    int reused = (uintptr_t) buf == before;
    bad |= xfer(buf, n, 2);

    int all_reused, any_bad;
    MPI_Allreduce(&reused, &all_reused, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("rcache_heap %s: %zu bytes, second buffer at the first's address on both ranks: "
               "%s; %s\n", mode, n, all_reused ? "yes" : "no",
               any_bad ? "FAIL" : "all bytes verified");
    free(buf);
    free(guard);
    MPI_Finalize();
    return any_bad;
}
