/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Sending CH4 active messages over RC queue pairs.
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

_Static_assert(MPIDI_AM_HANDLERS_MAX <= IBMC_PKT_MAX_HANDLERS,
               "MPIDIG handler ids must fit the packet header");

static int alloc_sbuf(MPIDI_IBMC_state_t * st)
{
    int idx = st->sbuf_free;
    if (idx >= 0)
        st->sbuf_free = st->sbufs[idx].next_free;
    return idx;
}

void MPIDI_IBMC_sbuf_release(MPIDI_IBMC_state_t * st, int idx)
{
    st->sbufs[idx].peer = -1;
    st->sbufs[idx].next_free = st->sbuf_free;
    st->sbuf_free = idx;
}

/* A packet that needs a receive buffer at the peer: a send buffer, a send
 * queue slot and a credit.  Credit packets need only the first two. */
static int can_post(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    return st->sbuf_free >= 0 && conn->sq_inflight < st->sq_depth &&
        ibmc_credit_can_send(&conn->cr);
}

static int can_post_credit(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    return st->sbuf_free >= 0 && conn->sq_inflight < st->sq_depth;
}

static int post_sbuf(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, int idx, size_t len)
{
    int mpi_errno = MPI_SUCCESS;
    struct ibv_sge sge = {
        .addr = (uintptr_t) st->sbufs[idx].buf,
        .length = (uint32_t) len,
        .lkey = st->mr->lkey
    };
    struct ibv_send_wr wr, *bad;
    ibmc_pkt_hdr_t *h = (ibmc_pkt_hdr_t *) st->sbufs[idx].buf;

    /* every packet gives back what we owe; all but credit packets use one,
     * and the first after a wait for credits asks for a larger window */
    h->credits = (uint16_t) ibmc_credit_take(&conn->cr);
    if (h->type != IBMC_PKT_CREDIT) {
        ibmc_credit_consume(&conn->cr);
        if (ibmc_credit_take_starved(&conn->cr))
            h->flags |= IBMC_PKT_F_STARVED;
    }
    wr = (struct ibv_send_wr) {
        .wr_id = IBMC_WR_ID(IBMC_WR_RC_SEND, idx),
        .sg_list = &sge,
        .num_sge = 1,
        .opcode = IBV_WR_SEND_WITH_IMM,
        .imm_data = htobe32((uint32_t) st->my_rank),
        .send_flags = IBV_SEND_SIGNALED | (len <= st->hca.rc_max_inline ? IBV_SEND_INLINE : 0)
    };
    st->sbufs[idx].peer = conn->rank;
    int rc = ibv_post_send(conn->qp, &wr, &bad);
    if (rc) {
        MPIDI_IBMC_sbuf_release(st, idx);
        mpi_errno = MPIDI_IBMC_VERBS_ERROR("ibv_post_send(RC)", rc);
        goto fn_fail;
    }
    conn->sq_inflight++;
    if (unlikely(st->qp_fault_at))
        MPIDI_IBMC_qp_fault_posted(st, conn->qp, 0);
    conn->tx_pkts++;
    conn->tx_bytes += len;
    conn->upkeep_pkts += ibmc_pkt_is_upkeep(h->type);
    if (h->type == IBMC_PKT_AM || h->type == IBMC_PKT_AM_CONT) {
        MPIDI_IBMC_pvars.eager_pkts_sent++;
        MPIDI_IBMC_pvars.eager_bytes_sent += len;
        if (h->flags & IBMC_PKT_F_SEND16)
            MPIDI_IBMC_pvars.compact_send_hdrs++;
    } else {
        MPIDI_IBMC_pvars.ctrl_pkts_sent++;
    }
  fn_fail:
    return mpi_errno;
}

/* The header of a packet that carries no active message of its own. */
static size_t put_ctrl_hdr(char *p, int type)
{
    ibmc_pkt_info_t info = {.type = type };
    return ibmc_pkt_put_hdr(p, &info);
}

/* The 16-byte form of an eager MPIDIG_SEND header (ibmc_send16_t), if this
 * header has one: a message whose data all follows it, no rendezvous id
 * in the flags.  The receiver rebuilds the MPIDIG_hdr_t, so the fields
 * the compact form leaves out must be the ones it can rebuild. */
static int send16_fields(int handler_id, const void *am_hdr, MPI_Aint am_hdr_sz,
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
static int contig_host_data(const void *data, int dt_contig, MPI_Aint true_lb,
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

static int post_rtu(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    int idx = alloc_sbuf(st);
    size_t len = put_ctrl_hdr(st->sbufs[idx].buf, IBMC_PKT_RTU);
    conn->need_rtu = 0;
    return post_sbuf(st, conn, idx, len);
}

/* Emit the next packet of `op`; the caller checked can_post(). */
static int post_next_packet(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn,
                            MPIDI_IBMC_sendop_t * op)
{
    int mpi_errno = MPI_SUCCESS;
    const size_t psz = (size_t) MPIDI_IBMC_global.packet_size;
    ibmc_frag_t f;
    int idx = alloc_sbuf(st);
    char *p = st->sbufs[idx].buf;

    if (!op->tx.first_done) {
        MPI_Aint data_sz = op->pkt_type == IBMC_PKT_RNDV ? op->rndv_data_sz :
            (MPI_Aint) op->tx.data_sz;
        ibmc_pkt_info_t info = {
            .type = op->pkt_type,
            .flags = op->pkt_flags,
            .handler_id = op->handler_id,
            .src_vci = op->src_vci,
            .dst_vci = op->dst_vci,
            .am_hdr_sz = (size_t) op->am_hdr_sz,
            .has_msg_sz = op->has_msg_sz,
            .msg_sz = (uint64_t) (op->am_hdr_sz + data_sz)
        };
        size_t hlen = ibmc_pkt_put_hdr(p, &info);
        ibmc_frag_next(&op->tx, psz - hlen - (size_t) op->extra_sz, &f);
        p += hlen;
        memcpy(p, op->am_hdr, op->am_hdr_sz + op->extra_sz);
        p += op->am_hdr_sz + op->extra_sz;
    } else {
        p += put_ctrl_hdr(p, IBMC_PKT_AM_CONT);
        ibmc_frag_next(&op->tx, psz - ibmc_pkt_hdr_len(0), &f);
    }
    mpi_errno = pack_data(op->contig, op->data, op->count, op->datatype, (MPI_Aint) f.data_off,
                          p, (MPI_Aint) f.data_len);
    if (mpi_errno) {
        MPIDI_IBMC_sbuf_release(st, idx);
        goto fn_fail;
    }
    p += f.data_len;
    mpi_errno = post_sbuf(st, conn, idx, (size_t) (p - st->sbufs[idx].buf));
  fn_fail:
    return mpi_errno;
}

static void complete_op(MPIDI_IBMC_sendop_t * op)
{
    if (op->pkt_type == IBMC_PKT_AM && op->tx.data_sz > 0)
        MPIR_Datatype_release_if_not_builtin(op->datatype);
    if (op->sreq)
        MPIDIG_global.origin_cbs[op->handler_id] (op->sreq);
    MPL_free(op);
}

/* Give credits back explicitly: the traffic is one-sided, so nothing would
 * carry them (see ibmc_credit.h).  If no buffer or slot is free, the
 * connection stays busy and send_drain tries again. */
int MPIDI_IBMC_send_credit(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    if (conn->cm.state != IBMC_CM_CONNECTED || !can_post_credit(st, conn)) {
        conn->credit_pending = 1;
        MPIDI_IBMC_conn_mark_busy(st, conn);
        return MPI_SUCCESS;
    }
    conn->credit_pending = 0;
    int idx = alloc_sbuf(st);
    size_t len = put_ctrl_hdr(st->sbufs[idx].buf, IBMC_PKT_CREDIT);
    return post_sbuf(st, conn, idx, len);
}

uint64_t MPIDI_IBMC_send_forget(MPIDI_IBMC_conn_t * conn, int pkt_type)
{
    uint64_t n = 0;
    MPIDI_IBMC_sendop_t **p = &conn->q_head, *last = NULL;
    while (*p) {
        MPIDI_IBMC_sendop_t *op = *p;
        /* a control message is one packet: not begun means not sent at all */
        if (op->pkt_type == pkt_type && !op->tx.first_done && !op->sreq && !op->bind) {
            *p = op->next;
            complete_op(op);
            n++;
        } else {
            last = op;
            p = &op->next;
        }
    }
    conn->q_tail = last;
    return n;
}

int MPIDI_IBMC_send_drain(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    int mpi_errno = MPI_SUCCESS;

    if (conn->cm.state != IBMC_CM_CONNECTED)
        return MPI_SUCCESS;
    if (conn->need_rtu) {
        if (!can_post(st, conn))
            goto out_of_resources;
        mpi_errno = post_rtu(st, conn);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = MPIDI_IBMC_rndv_post_reads(st, conn);
    MPIR_ERR_CHECK(mpi_errno);
    if (conn->inv_head) {
        mpi_errno = MPIDI_IBMC_rndv_post_invs(st, conn);
        MPIR_ERR_CHECK(mpi_errno);
    }
    while (conn->q_head) {
        MPIDI_IBMC_sendop_t *op = conn->q_head;
        if (op->bind) {
            /* the window must be bound before the packet that names it
             * (send queue order), and the bind needs a slot of its own */
            if (!MPIDI_IBMC_rndv_can_bind(st, conn) || !can_post(st, conn))
                goto out_of_resources;
            mpi_errno = MPIDI_IBMC_rndv_post_bind(st, conn, op->bind);
            MPIR_ERR_CHECK(mpi_errno);
            op->bind = NULL;
        }
        while (!ibmc_frag_tx_done(&op->tx)) {
            if (!can_post(st, conn))
                goto out_of_resources;
            mpi_errno = post_next_packet(st, conn, op);
            MPIR_ERR_CHECK(mpi_errno);
        }
        conn->q_head = op->next;
        if (!conn->q_head)
            conn->q_tail = NULL;
        complete_op(op);
    }
    /* what the packets above did not piggyback */
    if (conn->credit_pending && ibmc_credit_need_update(&conn->cr))
        mpi_errno = MPIDI_IBMC_send_credit(st, conn);
    else
        conn->credit_pending = 0;
  fn_fail:
    return mpi_errno;
  out_of_resources:
    /* a send completion will free a buffer, or the peer's credits come
     * back; progress comes back here */
    MPIDI_IBMC_conn_mark_busy(st, conn);
    if (!ibmc_credit_can_send(&conn->cr) && !conn->cr.starved) {
        ibmc_credit_mark_starved(&conn->cr);
        MPIDI_IBMC_pvars.credit_stalls++;
    }
    if (conn->credit_pending && ibmc_credit_need_update(&conn->cr))
        return MPIDI_IBMC_send_credit(st, conn);
    return MPI_SUCCESS;
}

/* Append a message to the peer's FIFO and push out what can go now.  `extra`
 * (a control packet's payload) travels after the AM header in the first
 * packet; `data`, if any, is packed behind it. */
static int enqueue(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, int pkt_type,
                   int handler_id, const void *am_hdr, MPI_Aint am_hdr_sz, const void *extra,
                   MPI_Aint extra_sz, const void *data, MPI_Aint count, MPI_Datatype datatype,
                   MPI_Aint data_sz, int src_vci, int dst_vci, MPIR_Request * sreq,
                   MPIDI_IBMC_rndv_send_t * bind)
{
    int mpi_errno = MPI_SUCCESS;
    if (conn->cm.state == IBMC_CM_FAILED) {
        /* fatal, as when the connection failed: earlier messages to the
         * peer are lost, so carrying on would be silent loss */
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_FATAL, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**ibmc_connect", "**ibmc_connect %d %d",
                                    conn->rank, MPIR_CVAR_IBMC_CONNECT_TIMEOUT);
    }
    MPIDI_IBMC_sendop_t *op = MPL_malloc(sizeof(*op) + am_hdr_sz + extra_sz, MPL_MEM_BUFFER);
    MPIR_ERR_CHKANDJUMP(!op, mpi_errno, MPI_ERR_OTHER, "**nomem");
    ibmc_send16_fields_t f16;
    /* a rendezvous announcement always says how much data it leaves behind */
    int one_packet = pkt_type == IBMC_PKT_AM &&
        am_hdr_sz + extra_sz + data_sz <= MPIDI_IBMC_global.eager_limit;
    int send16 = one_packet && send16_fields(handler_id, am_hdr, am_hdr_sz, data_sz, &f16);
    op->next = NULL;
    op->sreq = sreq;
    op->pkt_type = pkt_type;
    op->pkt_flags = send16 ? IBMC_PKT_F_SEND16 : 0;
    op->has_msg_sz = (pkt_type == IBMC_PKT_AM && !one_packet) || pkt_type == IBMC_PKT_RNDV;
    op->extra_sz = extra_sz;
    op->rndv_data_sz = pkt_type == IBMC_PKT_RNDV ? data_sz : 0;
    op->data = data;
    op->count = count;
    op->datatype = datatype;
    op->contig = NULL;
    op->handler_id = handler_id;
    op->src_vci = src_vci;
    op->dst_vci = dst_vci;
    op->bind = bind;
    if (send16) {
        op->am_hdr_sz = (MPI_Aint) ibmc_send16_pack(op->am_hdr, &f16);
    } else {
        op->am_hdr_sz = am_hdr_sz;
        if (am_hdr_sz)
            memcpy(op->am_hdr, am_hdr, am_hdr_sz);
    }
    if (extra_sz)
        memcpy(op->am_hdr + op->am_hdr_sz, extra, extra_sz);
    /* a rendezvous announcement carries no data of its own */
    ibmc_frag_tx_init(&op->tx, (size_t) op->am_hdr_sz,
                      pkt_type == IBMC_PKT_AM ? (size_t) data_sz : 0);
    if (pkt_type == IBMC_PKT_AM && data_sz > 0) {
        int dt_contig;
        MPI_Aint true_lb;
        MPIDI_Datatype_check_contig_lb(datatype, dt_contig, true_lb);
        mpi_errno = contig_host_data(data, dt_contig, true_lb, &op->contig);
        if (mpi_errno) {
            MPL_free(op);
            goto fn_fail;
        }
        MPIR_Datatype_add_ref_if_not_builtin(datatype);
    }

    if (conn->q_tail)
        conn->q_tail->next = op;
    else
        conn->q_head = op;
    conn->q_tail = op;

    if (conn->cm.state == IBMC_CM_IDLE) {
        mpi_errno = MPIDI_IBMC_conn_event(st, conn, IBMC_CM_EV_WANT_SEND, 0);
        MPIR_ERR_CHECK(mpi_errno);
    } else if (conn->cm.state == IBMC_CM_CONNECTED) {
        mpi_errno = MPIDI_IBMC_send_drain(st, conn);
        MPIR_ERR_CHECK(mpi_errno);
    }
    /* conn_event (handshake timer) and send_drain (out of buffers) have put
     * the connection on the busy list if anything is left to do */
  fn_fail:
    return mpi_errno;
}

int MPIDI_IBMC_send_ctrl(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, int pkt_type,
                         int handler_id, const void *am_hdr, MPI_Aint am_hdr_sz,
                         const void *extra, MPI_Aint extra_sz, MPI_Aint data_sz, int src_vci,
                         int dst_vci, MPIDI_IBMC_rndv_send_t * bind)
{
    return enqueue(st, conn, pkt_type, handler_id, am_hdr, am_hdr_sz, extra, extra_sz, NULL, 0,
                   MPI_DATATYPE_NULL, data_sz, src_vci, dst_vci, NULL, bind);
}

/* Whether a one-packet message may go out right now: the peer is connected,
 * nothing is queued ahead of it (MPI's non-overtaking order) and there is a
 * buffer, a send queue slot and a credit. */
static int can_post_now(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    return conn->cm.state == IBMC_CM_CONNECTED && !conn->q_head && !conn->need_rtu &&
        can_post(st, conn);
}

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
    int idx = alloc_sbuf(st);
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
    mpi_errno = post_sbuf(st, conn, idx, (size_t) (q - p) + (size_t) data_sz);
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

    mpi_errno = enqueue(st, conn, IBMC_PKT_AM, handler_id, am_hdr, am_hdr_sz, NULL, 0, data,
                        count, datatype, data_sz, src_vci, dst_vci, sreq, NULL);
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
