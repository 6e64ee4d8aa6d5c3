/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* CH4 hooks: a freed communicator's multicast channel (mcast/ibmc_mcast_bcast.c) and
 * node segments (ibmc_nodeseg.c); the
 * rest ibmc does not need to act on, and the native entry points that it
 * hands to MPIDIG's active-message implementations. */

#include <mpidimpl.h>
#include "ibmc_impl.h"
#include "ibmc_noinline.h"
#include "ibmc_types.h"
#include "mcast/ibmc_mcast.h"
#include "ibmc_nodeseg.h"

int MPIDI_IBMC_comm_set_hints(MPIR_Comm * comm_ptr, MPIR_Info * info)
{
    return MPI_SUCCESS;
}

int MPIDI_IBMC_mpi_comm_commit_pre_hook(MPIR_Comm * comm)
{
    /* the multicast channel is set up on the first broadcast that wants it */
    comm->dev.ch4.netmod.ibmc.coll = NULL;
    return MPI_SUCCESS;
}

int MPIDI_IBMC_mpi_comm_commit_post_hook(MPIR_Comm * comm)
{
    return MPI_SUCCESS;
}

int MPIDI_IBMC_mpi_comm_free_hook(MPIR_Comm * comm)
{
    int mpi_errno;
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    mpi_errno = MPIDI_IBMC_mcast_comm_free(comm);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_IBMC_nodeseg_comm_free(comm);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    return mpi_errno;
}

/* ---- dynamic processes: not supported (no way to name a process outside the job) ---- */

int MPIDI_IBMC_get_local_upids(MPIR_Comm * comm, int **local_upid_size, char **local_upids)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_ERR_SET(mpi_errno, MPI_ERR_OTHER, "**ibmc_dynamic");
    return mpi_errno;
}

int MPIDI_IBMC_upids_to_gpids(int size, int *remote_upid_size, char *remote_upids,
                              uint64_t * remote_gpids)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_ERR_SET(mpi_errno, MPI_ERR_OTHER, "**ibmc_dynamic");
    return mpi_errno;
}

int MPIDI_IBMC_dynamic_send(uint64_t remote_gpid, int tag, const void *buf, int size, int timeout)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_ERR_SET(mpi_errno, MPI_ERR_OTHER, "**ibmc_dynamic");
    return mpi_errno;
}

int MPIDI_IBMC_dynamic_recv(int tag, void *buf, int size, int timeout)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_ERR_SET(mpi_errno, MPI_ERR_OTHER, "**ibmc_dynamic");
    return mpi_errno;
}

/* ---- windows: MPIDIG implements RMA over active messages ---- */

int MPIDI_IBMC_mpi_win_create_hook(MPIR_Win * win)
{
    return MPI_SUCCESS;
}

int MPIDI_IBMC_mpi_win_allocate_hook(MPIR_Win * win)
{
    return MPI_SUCCESS;
}

int MPIDI_IBMC_mpi_win_allocate_shared_hook(MPIR_Win * win)
{
    return MPI_SUCCESS;
}

int MPIDI_IBMC_mpi_win_create_dynamic_hook(MPIR_Win * win)
{
    return MPI_SUCCESS;
}

int MPIDI_IBMC_mpi_win_attach_hook(MPIR_Win * win, void *base, MPI_Aint size)
{
    return MPI_SUCCESS;
}

int MPIDI_IBMC_mpi_win_detach_hook(MPIR_Win * win, const void *base)
{
    return MPI_SUCCESS;
}

int MPIDI_IBMC_mpi_win_free_hook(MPIR_Win * win)
{
    return MPI_SUCCESS;
}

int MPIDI_IBMC_mpi_win_set_info(MPIR_Win * win, MPIR_Info * info)
{
    return MPIDIG_mpi_win_set_info(win, info);
}

int MPIDI_IBMC_mpi_win_get_info(MPIR_Win * win, MPIR_Info ** info_p)
{
    return MPIDIG_mpi_win_get_info(win, info_p);
}

int MPIDI_IBMC_mpi_win_free(MPIR_Win ** win_p)
{
    return MPIDIG_mpi_win_free(win_p);
}

int MPIDI_IBMC_mpi_win_create(void *base, MPI_Aint length, int disp_unit, MPIR_Info * info,
                              MPIR_Comm * comm_ptr, MPIR_Win ** win_p)
{
    return MPIDIG_mpi_win_create(base, length, disp_unit, info, comm_ptr, win_p);
}

int MPIDI_IBMC_mpi_win_attach(MPIR_Win * win, void *base, MPI_Aint size)
{
    return MPIDIG_mpi_win_attach(win, base, size);
}

int MPIDI_IBMC_mpi_win_allocate_shared(MPI_Aint size, int disp_unit, MPIR_Info * info,
                                       MPIR_Comm * comm_ptr, void **baseptr_p, MPIR_Win ** win_p)
{
    return MPIDIG_mpi_win_allocate_shared(size, disp_unit, info, comm_ptr, baseptr_p, win_p);
}

int MPIDI_IBMC_mpi_win_detach(MPIR_Win * win, const void *base)
{
    return MPIDIG_mpi_win_detach(win, base);
}

int MPIDI_IBMC_mpi_win_allocate(MPI_Aint size, int disp_unit, MPIR_Info * info, MPIR_Comm * comm,
                                void *baseptr, MPIR_Win ** win_p)
{
    return MPIDIG_mpi_win_allocate(size, disp_unit, info, comm, baseptr, win_p);
}

int MPIDI_IBMC_mpi_win_create_dynamic(MPIR_Info * info, MPIR_Comm * comm, MPIR_Win ** win_p)
{
    return MPIDIG_mpi_win_create_dynamic(info, comm, win_p);
}

/* ---- partitioned communication ---- */

int MPIDI_IBMC_mpi_psend_init(const void *buf, int partitions, MPI_Aint count,
                              MPI_Datatype datatype, int rank, int tag, MPIR_Comm * comm,
                              MPIR_Info * info, MPIDI_av_entry_t * av, MPIR_Request ** req_p)
{
    return MPIDIG_mpi_psend_init(buf, partitions, count, datatype, rank, tag, comm, info, req_p);
}

int MPIDI_IBMC_mpi_precv_init(void *buf, int partitions, MPI_Aint count, MPI_Datatype datatype,
                              int rank, int tag, MPIR_Comm * comm, MPIR_Info * info,
                              MPIDI_av_entry_t * av, MPIR_Request ** req_p)
{
    return MPIDIG_mpi_precv_init(buf, partitions, count, datatype, rank, tag, comm, info, req_p);
}

/* ---- memory, datatypes, ops ---- */

void *MPIDI_IBMC_mpi_alloc_mem(MPI_Aint size, MPIR_Info * info)
{
    return MPIDIG_mpi_alloc_mem(size, info);
}

int MPIDI_IBMC_mpi_free_mem(void *ptr)
{
    return MPIDIG_mpi_free_mem(ptr);
}

int MPIDI_IBMC_mpi_type_commit_hook(MPIR_Datatype * datatype_p)
{
    return MPI_SUCCESS;
}

int MPIDI_IBMC_mpi_type_free_hook(MPIR_Datatype * datatype_p)
{
    return MPI_SUCCESS;
}

int MPIDI_IBMC_mpi_op_commit_hook(MPIR_Op * op_p)
{
    return MPI_SUCCESS;
}

int MPIDI_IBMC_mpi_op_free_hook(MPIR_Op * op_p)
{
    return MPI_SUCCESS;
}
