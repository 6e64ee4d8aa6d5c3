/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Host unit tests of ibmc_heapwatch.c: the executable is linked with the
 * interposers (built as libmpi's PIC objects are, -DPIC), so this program's
 * own mallopt, malloc_trim and madvise calls go through them, as an MPI
 * application's would.  Each call must be noted exactly when it can move
 * the registration cache's pages, and must still do what the C library
 * does. */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "ibmc_heapwatch.h"
#include "tap.h"

static ibmc_heapwatch_t seen(void)
{
    ibmc_heapwatch_t w;
    ibmc_heapwatch_read(&w);
    return w;
}

/* What the definition after ours returns (glibc's, or the sanitizer's
 * allocator's in this test's build): forwarding must give the same. */
static int next_mallopt(int param, int value)
{
    int (*f)(int, int) = (int (*)(int, int)) dlsym(RTLD_NEXT, "mallopt");
    return f ? f(param, value) : -12345;
}

int main(void)
{
    long page = sysconf(_SC_PAGESIZE);
    /* a heap page of our own: sbrk'd, so it lies in [lo, break) */
    char *heap = sbrk(0);
    char *grown = sbrk(4 * page);
    TAP_TEST("this program's calls reach the interposers") {
        TAP_EXPECT(grown != (void *) -1);
        TAP_EXPECT_EQ(ibmc_heapwatch_active(), 1);
    }

    TAP_TEST("nothing is noted before the watch is armed") {
        ibmc_heapwatch_t a = seen();
        mallopt(M_TRIM_THRESHOLD, 1 << 20);
        malloc_trim(0);
        madvise(grown, (size_t) page, MADV_DONTNEED);
        ibmc_heapwatch_t b = seen();
        TAP_EXPECT_EQ(b.trim_settings, a.trim_settings);
        TAP_EXPECT_EQ(b.trims, a.trims);
        TAP_EXPECT_EQ(b.discards, a.discards);
    }

    ibmc_heapwatch_arm((uintptr_t) heap);

    TAP_TEST("mallopt of the trim threshold is noted and reaches the C library") {
        ibmc_heapwatch_t a = seen();
        TAP_EXPECT_EQ(mallopt(M_TRIM_THRESHOLD, 256 << 10), next_mallopt(M_TRIM_THRESHOLD, 256 << 10));
        TAP_EXPECT_EQ(seen().trim_settings, a.trim_settings + 1);
        TAP_EXPECT(next_mallopt(M_TRIM_THRESHOLD, 256 << 10) != -12345);
        TAP_EXPECT_EQ(seen().trim_settings, a.trim_settings + 1);
    }

    TAP_TEST("other mallopt parameters are not noted (they leave the brk heap alone)") {
        ibmc_heapwatch_t a = seen();
        TAP_EXPECT_EQ(mallopt(M_MMAP_THRESHOLD, 512 << 10), next_mallopt(M_MMAP_THRESHOLD, 512 << 10));
        TAP_EXPECT_EQ(mallopt(M_ARENA_MAX, 4), next_mallopt(M_ARENA_MAX, 4));
        TAP_EXPECT_EQ(seen().trim_settings, a.trim_settings);
    }

    TAP_TEST("malloc_trim is noted") {
        ibmc_heapwatch_t a = seen();
        malloc_trim(0);
        TAP_EXPECT_EQ(seen().trims, a.trims + 1);
    }

    TAP_TEST("madvise that discards heap pages is noted, and discards them") {
        ibmc_heapwatch_t a = seen();
        memset(grown, 0x77, (size_t) (2 * page));
        TAP_EXPECT_EQ(madvise(grown + page, (size_t) page, MADV_DONTNEED), 0);
        TAP_EXPECT_EQ(((volatile char *) grown)[page], 0);
        TAP_EXPECT_EQ(((volatile char *) grown)[0], 0x77);
        TAP_EXPECT_EQ(seen().discards, a.discards + 1);
        TAP_EXPECT_EQ(madvise(grown, (size_t) page, MADV_FREE), 0);
        TAP_EXPECT_EQ(seen().discards, a.discards + 2);
    }

    TAP_TEST("madvise that keeps pages, or outside the heap, is not noted") {
        ibmc_heapwatch_t a = seen();
        TAP_EXPECT_EQ(madvise(grown, (size_t) page, MADV_WILLNEED), 0);
        char *m = mmap(NULL, (size_t) page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
        TAP_EXPECT(m != MAP_FAILED);
        TAP_EXPECT_EQ(madvise(m, (size_t) page, MADV_DONTNEED), 0);
        munmap(m, (size_t) page);
        TAP_EXPECT_EQ(seen().discards, a.discards);
    }

    TAP_TEST("madvise errors come back as the C library's") {
        TAP_EXPECT_EQ(madvise(grown + 1, (size_t) page, MADV_DONTNEED), -1);
        TAP_EXPECT_EQ(errno, EINVAL);
    }

    return tap_done();
}
