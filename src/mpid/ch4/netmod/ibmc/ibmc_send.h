/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The CH4 netmod send API.  It is MPICH's active-message fallback
 * (netmod_am_fallback_send.h), with one shortcut in front of MPIDIG: a
 * standard-mode send that fits one eager packet is posted directly and
 * returns MPICH's pre-completed send request, so it costs neither an MPIDIG
 * request nor the callback that completes it (MPIDI_IBMC_send_lightweight).
 * Synchronous sends need their request for the receiver's acknowledgement
 * and always go through MPIDIG. */

#ifndef IBMC_SEND_H_INCLUDED
#define IBMC_SEND_H_INCLUDED

#include "ibmc_impl.h"

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_isend(const void *buf, MPI_Aint count,
                                                MPI_Datatype datatype, int rank, int tag,
                                                MPIR_Comm * comm, int context_offset,
                                                MPIDI_av_entry_t * addr, MPIR_Request ** request)
{
    int sent;
    int mpi_errno = MPIDI_IBMC_send_lightweight(buf, count, datatype, rank, tag, comm,
                                                context_offset, addr, MPIR_ERR_NONE, &sent);
    if (mpi_errno == MPI_SUCCESS && sent) {
        *request = MPIR_Request_create_complete(MPIR_REQUEST_KIND__SEND);
        return MPI_SUCCESS;
    }
    if (mpi_errno)
        return mpi_errno;
    return MPIDIG_mpi_isend(buf, count, datatype, rank, tag, comm, context_offset, addr, 0, 0,
                            request);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_issend(const void *buf, MPI_Aint count,
                                                 MPI_Datatype datatype, int rank, int tag,
                                                 MPIR_Comm * comm, int context_offset,
                                                 MPIDI_av_entry_t * addr, MPIR_Request ** request)
{
    return MPIDIG_mpi_issend(buf, count, datatype, rank, tag, comm, context_offset, addr, 0, 0,
                             request);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_isend_coll(const void *buf, MPI_Aint count,
                                                 MPI_Datatype datatype, int rank, int tag,
                                                 MPIR_Comm * comm, int context_offset,
                                                 MPIDI_av_entry_t * addr, MPIR_Request ** request,
                                                 MPIR_Errflag_t * errflag)
{
    int sent;
    int mpi_errno = MPIDI_IBMC_send_lightweight(buf, count, datatype, rank, tag, comm,
                                                context_offset, addr, *errflag, &sent);
    if (mpi_errno == MPI_SUCCESS && sent) {
        *request = MPIR_Request_create_complete(MPIR_REQUEST_KIND__SEND);
        return MPI_SUCCESS;
    }
    if (mpi_errno)
        return mpi_errno;
    return MPIDIG_isend_coll(buf, count, datatype, rank, tag, comm, context_offset, addr, 0, 0,
                             request, errflag);
}

/* Sends are not cancelled (MPIDIG_mpi_cancel_send does nothing either), so
 * the shared pre-completed request is safe here. */
MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_cancel_send(MPIR_Request * sreq)
{
    return MPIDIG_mpi_cancel_send(sreq);
}

#endif /* IBMC_SEND_H_INCLUDED */
