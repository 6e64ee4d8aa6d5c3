/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L4 (send queue): each peer's FIFO of active messages and control
 * packets, cut into packets as buffers, send-queue slots and credits allow
 * (ibmc_sendq.c).  It keeps MPI's non-overtaking order and never
 * interleaves two messages on one queue pair (ibmc_frag.h).  The helpers
 * below are inline because the one-packet path of ibmc_am_send.c uses them
 * too, where a call costs as much as the copy. */

#ifndef IBMC_SENDQ_H_INCLUDED
#define IBMC_SENDQ_H_INCLUDED

#include "ibmc_types.h"
#include "ibmc_buffers.h"

/* A packet that needs a receive buffer at the peer: a send buffer, a send
 * queue slot and a credit.  Credit packets need only the first two. */
static inline int can_post(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    return st->sbuf_free >= 0 && conn->sq_inflight < st->sq_depth &&
        ibmc_credit_can_send(&conn->cr);
}

static inline int can_post_credit(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    return st->sbuf_free >= 0 && conn->sq_inflight < st->sq_depth;
}

/* The header of a packet that carries no active message of its own. */
static inline size_t put_ctrl_hdr(char *p, int type)
{
    ibmc_pkt_info_t info = {.type = type };
    return ibmc_pkt_put_hdr(p, &info);
}

/* The 16-byte form of an eager MPIDIG_SEND header (ibmc_send16_t), if this
 * header has one: a message whose data all follows it, no rendezvous id
 * in the flags.  The receiver rebuilds the MPIDIG_hdr_t, so the fields
 * the compact form leaves out must be the ones it can rebuild. */
static inline int send16_fields(int handler_id, const void *am_hdr, MPI_Aint am_hdr_sz,
                                MPI_Aint data_sz, ibmc_send16_fields_t * f)
{
    MPIDIG_hdr_t hdr;
    if (!MPIDI_IBMC_global.send16 || handler_id != MPIDIG_SEND ||
        am_hdr_sz != (MPI_Aint) sizeof(hdr))
        return 0;
    memcpy(&hdr, am_hdr, sizeof(hdr));
    if (hdr.rndv_hdr_sz != 0 || hdr.data_sz != data_sz ||
        (hdr.flags & ~MPIDIG_AM_SEND_FLAGS_SYNC))
        return 0;
    f->src_rank = hdr.src_rank;
    f->tag = hdr.tag;
    f->context_id = hdr.context_id;
    f->flags = hdr.flags;
    f->error_bits = hdr.error_bits;
    /* only a synchronous send is acknowledged to its request */
    f->has_sreq = (hdr.flags & MPIDIG_AM_SEND_FLAGS_SYNC) != 0;
    f->sreq = f->has_sreq ? (uint64_t) (uintptr_t) hdr.sreq_ptr : 0;
    return ibmc_send16_fits(f);
}

/* Where a message's data can be copied from with memcpy: contiguous host
 * memory, the common eager case, which needs none of the typerep engine's
 * per-call setup.  NULL for data the typerep engine has to read
 * (non-contiguous, or device memory).  Decided once per message, not per
 * packet. */
static inline int contig_host_data(const void *data, int dt_contig, MPI_Aint true_lb,
                                   const char **src)
{
    int mpi_errno = MPI_SUCCESS;
    MPL_pointer_attr_t attr;
    *src = NULL;
    if (!dt_contig)
        return MPI_SUCCESS;
    mpi_errno = MPIR_GPU_query_pointer_attr((const char *) data + true_lb, &attr);
    if (mpi_errno == MPI_SUCCESS && attr.type != MPL_GPU_POINTER_DEV)
        *src = (const char *) data + true_lb;
    return mpi_errno;
}

/* Copy `len` bytes of the message's data from `offset` on into a packet:
 * from `contig` (contig_host_data) if set, else through the typerep engine.
 * Inline: on the one-packet path the call costs as much as the copy. */
MPL_STATIC_INLINE_PREFIX int pack_data(const char *contig, const void *data, MPI_Aint count,
                                       MPI_Datatype datatype, MPI_Aint offset, char *dst,
                                       MPI_Aint len)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Aint actual = 0;
    if (len == 0)
        return MPI_SUCCESS;
    if (contig) {
        memcpy(dst, contig + offset, (size_t) len);
        return MPI_SUCCESS;
    }
    mpi_errno = MPIR_Typerep_pack(data, count, datatype, offset, dst, len, &actual);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_Assert(actual == len);
  fn_fail:
    return mpi_errno;
}

/* Whether a one-packet message may go out right now: the peer is connected,
 * nothing is queued ahead of it (MPI's non-overtaking order) and there is a
 * buffer, a send queue slot and a credit. */
static inline int can_post_now(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    return conn->cm.state == IBMC_CM_CONNECTED && !conn->q_head && !conn->need_rtu &&
        can_post(st, conn);
}

/* Append a message (or, with pkt_type other than IBMC_PKT_AM, a control
 * packet) to conn's FIFO and push out what can go now; see ibmc_sendq.c */
int MPIDI_IBMC_send_enqueue(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, int pkt_type,
                            int handler_id, const void *am_hdr, MPI_Aint am_hdr_sz,
                            const void *extra, MPI_Aint extra_sz, const void *data,
                            MPI_Aint count, MPI_Datatype datatype, MPI_Aint data_sz,
                            int src_vci, int dst_vci, MPIR_Request * sreq,
                            MPIDI_IBMC_pre_post_fn pre_post, void *pre_post_arg);

/* Queue a packet that carries no data of its own: IBMC_PKT_RNDV (AM header
 * + ibmc_rndv_t; data_sz is what the receiver will read), IBMC_PKT_RNDV_FIN
 * (no AM header), IBMC_PKT_MCAST or IBMC_PKT_FIN.  pre_post, if not NULL,
 * runs before its packet is posted (see MPIDI_IBMC_pre_post_fn). */
int MPIDI_IBMC_send_ctrl(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, int pkt_type,
                         int handler_id, const void *am_hdr, MPI_Aint am_hdr_sz,
                         const void *extra, MPI_Aint extra_sz, MPI_Aint data_sz, int src_vci,
                         int dst_vci, MPIDI_IBMC_pre_post_fn pre_post, void *pre_post_arg);

/* Push out what conn's FIFO holds, as far as resources allow; what is left
 * keeps conn on the busy list. */
int MPIDI_IBMC_send_drain(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn);
/* Give credits back explicitly (one-sided traffic, ibmc_credit.h). */
int MPIDI_IBMC_send_credit(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn);
/* Drop the control messages of pkt_type queued to conn that have not begun
 * to go; returns how many. */
uint64_t MPIDI_IBMC_send_forget(MPIDI_IBMC_conn_t * conn, int pkt_type);

#endif /* IBMC_SENDQ_H_INCLUDED */
