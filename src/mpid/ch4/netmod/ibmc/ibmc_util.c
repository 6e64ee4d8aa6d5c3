/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <mpidimpl.h>
#include <unistd.h>
#include <sys/random.h>
#include "ibmc_types.h"
#include "ibmc_util.h"

uint64_t MPIDI_IBMC_random_u64(void)
{
    uint64_t r;
    if (getrandom(&r, sizeof(r), 0) == (ssize_t) sizeof(r))
        return r;
    /* getrandom fails only before the kernel's pool is initialised, long
     * before an MPI job runs; stay usable rather than fail */
    return (uint64_t) (MPIDI_IBMC_now() * 1e9) ^ ((uint64_t) getpid() << 32) ^ (uintptr_t) & r;
}

/* MPID_Progress_test drives every module, the netmod's progress among them;
 * in a build with the global critical section that section is yielded too,
 * so that another thread's operation (another communicator's broadcast,
 * say) is not held up behind this wait. */
int MPIDI_IBMC_wait_turn(void)
{
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    int mpi_errno = MPID_Progress_test(NULL);
    MPID_THREAD_CS_YIELD(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    return mpi_errno;
}

/* Under MPICH's global critical section another thread may need it to make
 * the progress this thread waits for (its own collective on another
 * communicator, which some other process waits on in turn): hand it over. */
int MPIDI_IBMC_wait_turn_unlocked(void)
{
    int mpi_errno = MPID_Progress_test(NULL);
    MPID_THREAD_CS_YIELD(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    return mpi_errno;
}

int MPIDI_IBMC_poll_turn(int may_yield)
{
    return may_yield ? MPIDI_IBMC_progress_poll(0, 0) : MPIDI_IBMC_progress_poll_noyield();
}

int MPIDI_IBMC_peer_of_qpn(const MPIDI_IBMC_state_t * st, uint32_t qpn)
{
    for (int i = 0; i < st->world_size; i++) {
        if (st->conns[i].qp && st->conns[i].qp->qp_num == qpn)
            return i;
    }
    return -1;
}

int MPIDI_IBMC_wc_error(const char *what, int peer, const struct ibv_wc *wc)
{
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_FATAL, __func__, __LINE__,
                                MPI_ERR_OTHER, "**ibmc_wc", "**ibmc_wc %s %d %s", what, peer,
                                ibv_wc_status_str(wc->status));
}
