/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Registering user buffers for the rendezvous protocol.
 *
 * A registration pins the pages that back a virtual range at the time of
 * ibv_reg_mr.  If the application then frees the memory and the range is
 * mapped again (free + malloc, munmap + mmap at the same address, a
 * realloc that moves), a cached registration would make the HCA read or
 * write the old pages: silent corruption.  A cache is only correct for
 * memory whose unmapping it learns about.
 *
 * ibmc caches registrations of the brk heap only, and makes glibc keep the
 * heap mapped: at MPI_Init (when the cache is on) it tells malloc not to
 * serve large blocks with mmap (M_MMAP_MAX 0) and not to give heap memory
 * back to the kernel (M_TRIM_THRESHOLD), as MVAPICH2 does without its
 * malloc hooks.  free, realloc and malloc then only move blocks inside a
 * heap whose pages never change, so a cached registration stays valid for
 * as long as its range stays inside the heap; a heap that shrinks anyway
 * (sbrk with a negative increment) is noticed by comparing the break on
 * every lookup, and the part given back is invalidated.  Memory outside the
 * heap (mmap, shared memory, thread arenas, the stack) is registered for the
 * one transfer and deregistered after it, which is always correct.
 * Three calls of the application's break the promise without the break
 * ending up anywhere new: mallopt(M_TRIM_THRESHOLD) after MPI_Init,
 * malloc_trim, and madvise discarding heap pages.  ibmc_heapwatch.c sees
 * them; the first two turn the cache off for good, the third invalidates
 * what the cache holds.  Where they cannot be watched (libmpi linked
 * statically) the cache is off.
 *
 * All of this holds for glibc's malloc only.  Another allocator (tcmalloc
 * or jemalloc, preloaded or linked in) takes heap memory with sbrk and gives
 * it back with madvise(MADV_DONTNEED), which no break comparison sees; so
 * when malloc is not glibc's, the cache is off and every rendezvous
 * registers for its one transfer. */

#include <mpidimpl.h>
#include <malloc.h>
#include <unistd.h>
#include <dlfcn.h>
#include "ibmc_types.h"
#include "ibmc_heapwatch.h"
#include "ibmc_mem.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_IBMC_RCACHE_SIZE
      category    : CH4_IBMC
      type        : int
      default     : 1024
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        MiB of user memory the rendezvous registration cache keeps registered
        (pinned) after the transfers that used it have finished, so that
        reusing a buffer does not register it again.  Least recently used
        registrations beyond it are released.  Only heap memory is cached, and
        with the cache on, ibmc stops glibc's malloc from returning memory to
        the kernel (see doc/design.md, "Registration cache").  0 turns the cache off:
        every rendezvous registers and deregisters its buffers, and malloc is
        left alone.  The cache is off as well when malloc is not glibc's (an
        allocator such as tcmalloc or jemalloc, preloaded or linked in): such
        allocators return memory in ways the cache cannot see.  It turns off
        during the run when the application sets M_TRIM_THRESHOLD with
        mallopt or calls malloc_trim, and it is off with a static libmpi,
        where those calls cannot be watched.  From 0 to 1048576.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* Registrations grant remote access only through a memory window bound per
 * transfer (ibmc_rndv.c), where the device has them. */
#define IBMC_MR_ACCESS(st) (IBV_ACCESS_LOCAL_WRITE | \
                            ((st)->use_mw ? IBV_ACCESS_MW_BIND : IBV_ACCESS_REMOTE_READ))
#define IBMC_RCACHE_ALIGN (1 << 20)     /* misses register whole MiBs of heap */

static void *reg_cb(void *ctx, uintptr_t start, uintptr_t end, int *err)
{
    MPIDI_IBMC_state_t *st = ctx;
    struct ibv_mr *mr = ibv_reg_mr(st->hca.pd, (void *) start, end - start, IBMC_MR_ACCESS(st));
    if (!mr)
        *err = errno ? errno : ENOMEM;
    return mr;
}

static void dereg_cb(void *ctx, void *handle)
{
    (void) ctx;
    ibv_dereg_mr(handle);
}

/* Where the brk heap starts: the [heap] line of /proc/self/maps, or the
 * current break if malloc has not used brk yet. */
static uintptr_t heap_start(void)
{
    uintptr_t lo = (uintptr_t) sbrk(0);
    char line[256];
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return lo;
    while (fgets(line, sizeof(line), f)) {
        unsigned long a, b;
        if (strstr(line, "[heap]") && sscanf(line, "%lx-%lx", &a, &b) == 2) {
            lo = a;
            break;
        }
    }
    fclose(f);
    return lo;
}

/* Whether the malloc this process calls is the C library's: the first
 * definition in the global scope against libc.so.6's own. */
static int malloc_is_glibc(void)
{
    void *self = dlopen(NULL, RTLD_NOW);
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    void *used = self ? dlsym(self, "malloc") : NULL;
    void *own = libc ? dlsym(libc, "malloc") : NULL;
    if (libc)
        dlclose(libc);
    if (self)
        dlclose(self);
    return used && used == own;
}

int MPIDI_IBMC_mem_init(MPIDI_IBMC_state_t * st)
{
    int mpi_errno = MPI_SUCCESS;
    long page = sysconf(_SC_PAGESIZE);

    if (MPIR_CVAR_IBMC_RCACHE_SIZE < 0 || MPIR_CVAR_IBMC_RCACHE_SIZE > 1048576) {
        MPIR_ERR_SETANDJUMP3(mpi_errno, MPI_ERR_OTHER, "**ibmc_cvar", "**ibmc_cvar %s %d %s",
                             "MPIR_CVAR_IBMC_RCACHE_SIZE", MPIR_CVAR_IBMC_RCACHE_SIZE,
                             "it must be between 0 and 1048576 (MiB)");
    }
    st->rcache_on = MPIR_CVAR_IBMC_RCACHE_SIZE > 0;
    if (st->rcache_on && !malloc_is_glibc()) {
        st->rcache_on = 0;
        if (MPIR_CVAR_IBMC_STATS)
            printf("ibmc-stats: rank %d registration cache off: malloc is not glibc's\n",
                   st->my_rank);
    }
    if (st->rcache_on && !ibmc_heapwatch_active()) {
        st->rcache_on = 0;
        if (MPIR_CVAR_IBMC_STATS)
            printf("ibmc-stats: rank %d registration cache off: the application's mallopt, "
                   "malloc_trim and madvise cannot be watched (static libmpi)\n", st->my_rank);
    }
    if (st->rcache_on) {
        mallopt(M_MMAP_MAX, 0);
        mallopt(M_TRIM_THRESHOLD, -1);
    }
    st->heap_lo = heap_start();
    st->heap_hi = (uintptr_t) sbrk(0);
    if (st->rcache_on) {
        ibmc_heapwatch_arm(st->heap_lo);
        ibmc_heapwatch_read(&st->heap_seen);
    }
    ibmc_rcache_init(&st->rcache, (size_t) MPIR_CVAR_IBMC_RCACHE_SIZE << 20,
                     (size_t) (page > 0 ? page : 4096), IBMC_RCACHE_ALIGN, reg_cb, dereg_cb, st);
  fn_fail:
    return mpi_errno;
}

void MPIDI_IBMC_mem_finalize(MPIDI_IBMC_state_t * st)
{
    ibmc_rcache_destroy(&st->rcache);
}

/* Act on what the application did to the heap since the last lookup. */
static void heap_changes(MPIDI_IBMC_state_t * st, uintptr_t brk)
{
    ibmc_heapwatch_t now;
    uintptr_t hi = MPL_MAX(brk, st->heap_hi);
    const char *why = NULL;

    ibmc_heapwatch_read(&now);
    if (now.trim_settings != st->heap_seen.trim_settings)
        why = "the application set M_TRIM_THRESHOLD with mallopt";
    else if (now.trims != st->heap_seen.trims)
        why = "the application called malloc_trim";
    if (why) {
        ibmc_rcache_invalidate(&st->rcache, (void *) st->heap_lo, hi - st->heap_lo);
        st->rcache_on = 0;
        if (MPIR_CVAR_IBMC_STATS)
            printf("ibmc-stats: rank %d registration cache off: %s\n", st->my_rank, why);
    } else if (now.discards != st->heap_seen.discards) {
        ibmc_rcache_invalidate(&st->rcache, (void *) st->heap_lo, hi - st->heap_lo);
    }
    st->heap_seen = now;
}

int MPIDI_IBMC_mem_register(MPIDI_IBMC_state_t * st, const void *buf, size_t len,
                            MPIDI_IBMC_reg_t * reg)
{
    uintptr_t a = (uintptr_t) buf;
    uintptr_t brk = (uintptr_t) sbrk(0);

    if (st->rcache_on)
        heap_changes(st, brk);
    if (brk < st->heap_hi)
        ibmc_rcache_invalidate(&st->rcache, (void *) brk, st->heap_hi - brk);
    st->heap_hi = brk;

    if (st->rcache_on && a >= st->heap_lo && a + len <= brk) {
        int err = ibmc_rcache_acquire(&st->rcache, buf, len, st->heap_lo, brk, &reg->entry);
        if (err == ENOMEM || err == EAGAIN) {
            /* over the locked-memory limit: give back what nobody uses, retry */
            ibmc_rcache_flush(&st->rcache);
            err = ibmc_rcache_acquire(&st->rcache, buf, len, st->heap_lo, brk, &reg->entry);
        }
        if (err) {
            reg->entry = NULL;
            reg->mr = NULL;
            return err;
        }
        reg->mr = reg->entry->handle;
        return 0;
    }
    reg->entry = NULL;
    reg->mr = ibv_reg_mr(st->hca.pd, (void *) buf, len, IBMC_MR_ACCESS(st));
    if (!reg->mr)
        return errno ? errno : ENOMEM;
    st->reg_uncached++;
    return 0;
}

void MPIDI_IBMC_mem_release(MPIDI_IBMC_state_t * st, MPIDI_IBMC_reg_t * reg)
{
    if (reg->entry)
        ibmc_rcache_release(&st->rcache, reg->entry);
    else if (reg->mr)
        ibv_dereg_mr(reg->mr);
    reg->entry = NULL;
    reg->mr = NULL;
}
