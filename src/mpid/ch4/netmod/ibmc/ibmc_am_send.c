/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L6 (CH4 entry points): sending CH4 active messages over RC queue
 * pairs.
 *
 * A message is either copied (packed) into registered eager buffers, one
 * packet at a time, and the origin callback runs as soon as the last byte is
 * copied out of the user's buffer; or, for a large contiguous MPIDIG_SEND,
 * announced by one IBMC_PKT_RNDV packet and pulled by the receiver
 * (ibmc_rndv.c).  A message that fits one packet, to a connected peer
 * with nothing queued, goes straight out; everything else waits in the
 * peer's FIFO, which keeps MPI's non-overtaking order and never interleaves
 * two messages on one QP (see ibmc_frag.h).  Headers are kept short
 * (ibmc_wire.h): the sender's rank rides in the immediate data, and an
 * eager MPIDIG_SEND that fits one packet has its header compacted. */

#include <mpidimpl.h>
#include <endian.h>
#include "ibmc_types.h"
#include "ibmc_buffers.h"
#include "ibmc_sendq.h"
#include "ibmc_rndv.h"

_Static_assert(MPIDI_AM_HANDLERS_MAX <= IBMC_PKT_MAX_HANDLERS,
               "MPIDIG handler ids must fit the packet header");

/* Pack and post a whole message as one packet; the caller checked
 * can_post_now() and that the headers and data fit the eager limit.  With
 * `f16` the header goes in its compact form, otherwise `am_hdr` as is.
 * `contig` is contig_host_data's answer for the data.  Always inline, even
 * where MPICH's MPL_STATIC_INLINE_PREFIX is plain `static inline` (its
 * default, under which GCC keeps this out of line for its two callers):
 * inlined, it is specialised for the lightweight send's constant arguments,
 * which saves more than the call (bench/msg-cost.sh counts it). */
ATTRIBUTE((always_inline)) static inline
int post_single(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, int handler_id,
                const ibmc_send16_fields_t * f16, const void *am_hdr, MPI_Aint am_hdr_sz,
                const char *contig, const void *data, MPI_Aint count, MPI_Datatype datatype,
                MPI_Aint data_sz, int src_vci, int dst_vci)
{
    int mpi_errno = MPI_SUCCESS;
    int idx = MPIDI_IBMC_sbuf_alloc(st);
    char *p = st->sbufs[idx].buf;
    char *q = p + ibmc_pkt_hdr_len(0);
    ibmc_pkt_info_t info = {
        .type = IBMC_PKT_AM,
        .handler_id = handler_id,
        .src_vci = src_vci,
        .dst_vci = dst_vci
    };
    if (f16) {
        info.flags = IBMC_PKT_F_SEND16;
        info.am_hdr_sz = ibmc_send16_pack(q, f16);
    } else {
        info.am_hdr_sz = (size_t) am_hdr_sz;
        memcpy(q, am_hdr, am_hdr_sz);
    }
    ibmc_pkt_put_hdr(p, &info);
    q += info.am_hdr_sz;
    mpi_errno = pack_data(contig, data, count, datatype, 0, q, data_sz);
    if (mpi_errno) {
        MPIDI_IBMC_sbuf_release(st, idx);
        goto fn_fail;
    }
    mpi_errno = MPIDI_IBMC_post_sbuf(st, conn, idx, (size_t) (q - p) + (size_t) data_sz);
  fn_fail:
    return mpi_errno;
}

int MPIDI_IBMC_am_send(int rank, MPIR_Comm * comm, int handler_id,
                       const void *am_hdr, MPI_Aint am_hdr_sz,
                       const void *data, MPI_Aint count, MPI_Datatype datatype,
                       int src_vci, int dst_vci, MPIR_Request * sreq)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_IBMC_state_t *st = MPIDI_IBMC_STATE();
    MPI_Aint data_sz = 0, true_lb = 0;
    int dt_contig = 1;
    MPIR_Datatype *dt_ptr;

    MPIR_FUNC_ENTER;

    MPIDI_av_entry_t *av = MPIDIU_comm_rank_to_av(comm, rank);
    MPIDI_IBMC_conn_t *conn = &st->conns[MPIDI_IBMC_AV(av).world_rank];

    if (count > 0)
        MPIDI_Datatype_get_info(count, datatype, dt_contig, data_sz, dt_ptr, true_lb);
    MPIR_Assert(am_hdr_sz <= MPIDI_IBMC_global.am_hdr_max_sz);
    MPIR_Assert(src_vci < IBMC_PKT_MAX_VCIS && dst_vci < IBMC_PKT_MAX_VCIS);

    /* Zero copy for large contiguous point-to-point data (MPIDI_NM_am_check_eager
     * sent those here instead of through MPIDIG's RTS/CTS).  If the buffer
     * cannot be registered, the copy path below still delivers it. */
    if (handler_id == MPIDIG_SEND && data_sz > MPIDI_IBMC_global.rndv_threshold && dt_contig &&
        am_hdr_sz + (MPI_Aint) sizeof(ibmc_rndv_t) <= MPIDI_IBMC_global.am_hdr_max_sz) {
        int sent = 0;
        mpi_errno = MPIDI_IBMC_rndv_send(st, conn, handler_id, am_hdr, am_hdr_sz,
                                         MPIR_get_contig_ptr(data, true_lb), data_sz, src_vci,
                                         dst_vci, sreq, &sent);
        MPIR_ERR_CHECK(mpi_errno);
        if (sent)
            goto fn_exit;
    }

    /* fast path: a one-packet message with nothing ahead of it */
    if (am_hdr_sz + data_sz <= MPIDI_IBMC_global.eager_limit && can_post_now(st, conn)) {
        ibmc_send16_fields_t f16;
        const char *contig = NULL;
        int compact = send16_fields(handler_id, am_hdr, am_hdr_sz, data_sz, &f16);
        if (data_sz > 0) {
            mpi_errno = contig_host_data(data, dt_contig, true_lb, &contig);
            MPIR_ERR_CHECK(mpi_errno);
        }
        mpi_errno = post_single(st, conn, handler_id, compact ? &f16 : NULL, am_hdr, am_hdr_sz,
                                contig, data, count, datatype, data_sz, src_vci, dst_vci);
        MPIR_ERR_CHECK(mpi_errno);
        if (sreq)
            MPIDIG_global.origin_cbs[handler_id] (sreq);
        goto fn_exit;
    }

    mpi_errno = MPIDI_IBMC_send_enqueue(st, conn, IBMC_PKT_AM, handler_id, am_hdr, am_hdr_sz,
                                        NULL, 0, data, count, datatype, data_sz, src_vci,
                                        dst_vci, sreq, NULL, NULL);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* MPI_Isend and MPI_Send, and the sends of MPIR's collectives, of a message
 * that fits one packet: packed into a send buffer and posted here, with no
 * MPIDIG request behind it.  It is the compact one-packet form MPIDIG's eager
 * path sends through MPIDI_IBMC_am_send (no request pointer: a standard-mode
 * send is never acknowledged), so the receiver handles it the same way.  The
 * one difference: a message 16-47 bytes short of the one-packet limit goes
 * here in one packet where MPIDIG, building the 48-byte header first, would
 * send two; only an MPIR_CVAR_IBMC_PACKET_SIZE set below what the rendezvous
 * threshold needs reaches that window (the default sizes do not).  The
 * caller returns MPICH's pre-completed send request, as ch4:ofi does for its
 * lightweight (inject-size) sends.  `*sent` is 0 when the message must take
 * MPIDIG's path: the path is off, the message does not fit one packet or is
 * above the rendezvous threshold, the peer is not connected yet, something
 * is queued ahead of it, or it has to wait for a buffer or a credit. */
int MPIDI_IBMC_send_lightweight(const void *buf, MPI_Aint count, MPI_Datatype datatype,
                                int rank, int tag, MPIR_Comm * comm, int context_offset,
                                MPIDI_av_entry_t * addr, int error_bits, int *sent)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Aint data_sz, true_lb;
    int dt_contig;
    const char *contig;
    ibmc_send16_fields_t f16 = {
        .src_rank = comm->rank,
        .tag = tag,
        .context_id = (uint32_t) (comm->context_id + context_offset),
        .flags = MPIDIG_AM_SEND_FLAGS_NONE,
        .error_bits = error_bits
    };

    *sent = 0;
    if (!MPIDI_IBMC_global.lightweight || !ibmc_send16_fits(&f16))
        return MPI_SUCCESS;
    MPIDI_Datatype_check_contig_size_lb(datatype, count, dt_contig, data_sz, true_lb);
    /* above the rendezvous threshold (MPIR_CVAR_IBMC_EAGER_LIMIT) contiguous
     * data goes zero-copy, which MPIDI_IBMC_am_send decides */
    if ((MPI_Aint) ibmc_send16_len(0) + data_sz > MPIDI_IBMC_global.eager_limit ||
        data_sz > MPIDI_IBMC_global.rndv_threshold)
        return MPI_SUCCESS;
    contig = NULL;
    if (data_sz > 0) {
        mpi_errno = contig_host_data(buf, dt_contig, true_lb, &contig);
        if (mpi_errno)
            return mpi_errno;
    }

    /* the lock MPIDIG_mpi_isend takes: the fallback API runs on VCI 0 */
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    MPIDI_IBMC_state_t *st = MPIDI_IBMC_STATE();
    MPIDI_IBMC_conn_t *conn = &st->conns[MPIDI_IBMC_AV(addr).world_rank];
    if (can_post_now(st, conn)) {
        mpi_errno = post_single(st, conn, MPIDIG_SEND, &f16, NULL, 0, contig, buf, count,
                                datatype, data_sz, 0, 0);
        if (mpi_errno == MPI_SUCCESS) {
            *sent = 1;
            MPIDI_IBMC_pvars.lightweight_sends++;
        }
    }
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    return mpi_errno;
}
