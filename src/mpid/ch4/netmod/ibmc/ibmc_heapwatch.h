/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* What the application does to the brk heap behind the registration cache's
 * back (ibmc_mem.c).
 *
 * The cache is correct only while the heap's pages stay put, which ibmc
 * arranges with mallopt at MPI_Init.  Three calls break that without the
 * break ending up anywhere new, so comparing the break misses them:
 *   - mallopt(M_TRIM_THRESHOLD) after MPI_Init: a finite threshold lets
 *     free shrink the heap and the next malloc grow it back over new pages;
 *   - malloc_trim, which gives the pages of free chunks back with
 *     madvise(MADV_DONTNEED) and shrinks the top;
 *   - the application's own madvise(MADV_DONTNEED / MADV_FREE / MADV_REMOVE)
 *     on heap memory (a quick way to zero a buffer).
 * libmpi defines these three symbols; an executable linked against libmpi
 * finds them before the C library's, so its calls (and its other
 * libraries') come here first, are noted, and go on to the C library.
 * glibc's malloc calls its own internal aliases and is not seen, nor needs
 * to be.  Notes are counters the cache reads on every lookup; nothing here
 * takes a lock or touches the cache, so these are safe from any thread and
 * inside MPI.
 *
 * Only the shared libmpi defines them.  With libmpi.a, or when something
 * else's definitions come first, ibmc_heapwatch_active() says so and the
 * cache stays off. */

#ifndef IBMC_HEAPWATCH_H_INCLUDED
#define IBMC_HEAPWATCH_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

typedef struct {
    unsigned long trim_settings;        /* mallopt(M_TRIM_THRESHOLD, ...) calls since armed */
    unsigned long trims;        /* malloc_trim calls */
    unsigned long discards;     /* madvise calls that discard pages of [lo, break) */
} ibmc_heapwatch_t;

/* Start noting calls; madvise counts only over [lo, the break). */
void ibmc_heapwatch_arm(uintptr_t lo);

/* What has been noted so far (each counter read atomically). */
void ibmc_heapwatch_read(ibmc_heapwatch_t * out);

/* Whether this process's mallopt, malloc_trim and madvise are the ones
 * above: 0 in a static executable, or when something else defines them. */
int ibmc_heapwatch_active(void);

#endif /* IBMC_HEAPWATCH_H_INCLUDED */
