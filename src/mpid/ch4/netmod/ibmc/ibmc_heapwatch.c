/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Interposers for mallopt, malloc_trim and madvise; see ibmc_heapwatch.h.
 *
 * The counters are process-wide statics: an interposer is called with the
 * C library's arguments and nothing else, so there is no struct to hang
 * them on. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ibmc_heapwatch.h"

/* Exported (libmpi may hide its symbols by default) and weak, so that a
 * static link takes the C library's definitions without a clash. */
#define IBMC_INTERPOSE(fn) __attribute__((weak, alias(#fn), visibility("default")))

static atomic_int armed;
static atomic_uintptr_t heap_lo;
static atomic_ulong n_trim_setting, n_trim, n_discard;

/* The interposers exist only in the shared library (libtool's PIC
 * objects).  glibc's own definitions are weak too, so in libmpi.a ours could
 * win a static link and forward to nothing; there the cache is off instead. */
#ifdef PIC

/* glibc exports mallopt's body under this name too; the fallback if dlsym
 * cannot see the C library */
extern int __libc_mallopt(int param, int value);

typedef int (*mallopt_fn) (int, int);
typedef int (*malloc_trim_fn) (size_t);

/* The next definition after libmpi's: the C library's.  Looked up on each
 * call (these are rare), so there is no pointer cache to race on. */
static void *libc_symbol(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

static int libc_mallopt(int param, int value)
{
    mallopt_fn f = (mallopt_fn) libc_symbol("mallopt");
    return f ? f(param, value) : __libc_mallopt(param, value);
}

static int watch_mallopt(int param, int value)
{
    /* of glibc's parameters only the trim threshold lets free() give heap
     * pages back: mmap'd chunks and other arenas lie outside the brk heap,
     * which is all the cache holds */
    if (param == M_TRIM_THRESHOLD && atomic_load(&armed))
        atomic_fetch_add(&n_trim_setting, 1);
    return libc_mallopt(param, value);
}

static int watch_malloc_trim(size_t pad)
{
    /* noted before the pages go: a lookup that starts after the trim has
     * returned sees it */
    if (atomic_load(&armed))
        atomic_fetch_add(&n_trim, 1);
    malloc_trim_fn f = (malloc_trim_fn) libc_symbol("malloc_trim");
    return f ? f(pad) : 0;
}

static int watch_madvise(void *addr, size_t len, int advice)
{
    if (atomic_load(&armed) && (advice == MADV_DONTNEED || advice == MADV_FREE ||
                                advice == MADV_REMOVE)) {
        uintptr_t a = (uintptr_t) addr, lo = atomic_load(&heap_lo);
        uintptr_t hi = (uintptr_t) sbrk(0);
        if (a < hi && a + len > lo)
            atomic_fetch_add(&n_discard, 1);
    }
    /* glibc's madvise is the bare system call; calling it directly also
     * works where dlsym cannot find the C library's */
    long rc = syscall(SYS_madvise, addr, len, advice);
    return rc < 0 ? -1 : (int) rc;
}

int mallopt(int param, int value) IBMC_INTERPOSE(watch_mallopt);
int malloc_trim(size_t pad) IBMC_INTERPOSE(watch_malloc_trim);
int madvise(void *addr, size_t len, int advice) IBMC_INTERPOSE(watch_madvise);
#endif

void ibmc_heapwatch_arm(uintptr_t lo)
{
    atomic_store(&heap_lo, lo);
    atomic_store(&armed, 1);
}

void ibmc_heapwatch_read(ibmc_heapwatch_t * out)
{
    out->trim_settings = atomic_load_explicit(&n_trim_setting, memory_order_acquire);
    out->trims = atomic_load_explicit(&n_trim, memory_order_acquire);
    out->discards = atomic_load_explicit(&n_discard, memory_order_acquire);
}

int ibmc_heapwatch_active(void)
{
#ifndef PIC
    return 0;
#else
    /* what the process's global scope calls these names, against our
     * definitions (the static names: `mallopt` here would itself resolve
     * through the global scope) */
    void *self = dlopen(NULL, RTLD_NOW);
    int ours = 0;
    if (self) {
        ours = dlsym(self, "mallopt") == (void *) watch_mallopt &&
            dlsym(self, "malloc_trim") == (void *) watch_malloc_trim &&
            dlsym(self, "madvise") == (void *) watch_madvise;
        dlclose(self);
    }
    return ours;
#endif
}
