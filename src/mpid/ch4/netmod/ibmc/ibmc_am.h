/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#ifndef IBMC_AM_H_INCLUDED
#define IBMC_AM_H_INCLUDED

#include "ibmc_impl.h"

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_isend(int rank, MPIR_Comm * comm, int handler_id,
                                               const void *am_hdr, MPI_Aint am_hdr_sz,
                                               const void *data, MPI_Aint count,
                                               MPI_Datatype datatype, int src_vci, int dst_vci,
                                               MPIR_Request * sreq)
{
    return MPIDI_IBMC_am_send(rank, comm, handler_id, am_hdr, am_hdr_sz, data, count, datatype,
                              src_vci, dst_vci, sreq);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_isend_reply(MPIR_Comm * comm, int src_rank,
                                                     int handler_id, const void *am_hdr,
                                                     MPI_Aint am_hdr_sz, const void *data,
                                                     MPI_Aint count, MPI_Datatype datatype,
                                                     int src_vci, int dst_vci, MPIR_Request * sreq)
{
    return MPIDI_IBMC_am_send(src_rank, comm, handler_id, am_hdr, am_hdr_sz, data, count,
                              datatype, src_vci, dst_vci, sreq);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_send_hdr(int rank, MPIR_Comm * comm, int handler_id,
                                                  const void *am_hdr, MPI_Aint am_hdr_sz,
                                                  int src_vci, int dst_vci)
{
    return MPIDI_IBMC_am_send(rank, comm, handler_id, am_hdr, am_hdr_sz, NULL, 0,
                              MPI_DATATYPE_NULL, src_vci, dst_vci, NULL);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_send_hdr_reply(MPIR_Comm * comm, int src_rank,
                                                        int handler_id, const void *am_hdr,
                                                        MPI_Aint am_hdr_sz, int src_vci,
                                                        int dst_vci)
{
    return MPIDI_IBMC_am_send(src_rank, comm, handler_id, am_hdr, am_hdr_sz, NULL, 0,
                              MPI_DATATYPE_NULL, src_vci, dst_vci, NULL);
}

MPL_STATIC_INLINE_PREFIX MPI_Aint MPIDI_NM_am_hdr_max_sz(void)
{
    return MPIDI_IBMC_global.am_hdr_max_sz;
}

MPL_STATIC_INLINE_PREFIX MPI_Aint MPIDI_NM_am_eager_limit(void)
{
    return MPIDI_IBMC_global.eager_limit;
}

MPL_STATIC_INLINE_PREFIX MPI_Aint MPIDI_NM_am_eager_buf_limit(void)
{
    return MPIDI_IBMC_global.packet_size;
}

/* "Eager" to MPIDIG means "give me the data now": true for messages up to the
 * eager limit (sent as one or more packets) and for larger contiguous ones,
 * which ibmc sends by its own zero-copy rendezvous (ibmc_rndv.c).  Large
 * non-contiguous data goes through MPIDIG's RTS/CTS handshake and is then
 * packed into packets. */
MPL_STATIC_INLINE_PREFIX bool MPIDI_NM_am_check_eager(MPI_Aint am_hdr_sz, MPI_Aint data_sz,
                                                      const void *data, MPI_Aint count,
                                                      MPI_Datatype datatype, MPIR_Request * sreq)
{
    int contig;
    if (am_hdr_sz + data_sz <= MPIDI_IBMC_global.eager_limit ||
        data_sz <= MPIDI_IBMC_global.rndv_threshold)
        return true;
    MPIDI_Datatype_check_contig(datatype, contig);
    return contig;
}

MPL_STATIC_INLINE_PREFIX MPIDIG_recv_data_copy_cb MPIDI_NM_am_get_data_copy_cb(uint32_t attr)
{
    return (attr & MPIDIG_AM_ATTR__IS_RNDV) ? MPIDI_IBMC_rndv_copy_cb : NULL;
}

MPL_STATIC_INLINE_PREFIX void MPIDI_NM_am_request_init(MPIR_Request * req)
{
}

MPL_STATIC_INLINE_PREFIX void MPIDI_NM_am_request_finalize(MPIR_Request * req)
{
}

#endif /* IBMC_AM_H_INCLUDED */
