/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The zero-copy rendezvous protocol for large contiguous point-to-point data.
 *
 * The sender registers its buffer and sends one IBMC_PKT_RNDV packet: the
 * CH4 AM header and where the data is (ibmc_rndv_t).  The receiver hands the
 * header to MPIDIG as a transport rendezvous (MPIDIG_AM_ATTR__IS_RNDV).  Once
 * the message is matched to a receive, at once or later through the
 * data-copy callback MPIDIG keeps on the unexpected request, the receiver
 * RDMA-READs the data straight into the receive buffer, completes the
 * receive and sends IBMC_PKT_RNDV_FIN back; on that the sender completes its
 * request and releases the registration.  Only a receive buffer that is
 * not contiguous is filled through a bounce buffer.  Why READ and not
 * WRITE: doc/design.md, "Rendezvous". */

#include <mpidimpl.h>
#include <unistd.h>
#include "ibmc_types.h"
#include "ibmc_util.h"
#include "ibmc_buffers.h"
#include "ibmc_conn.h"
#include "ibmc_mem.h"
#include "ibmc_qp_fault.h"
#include "ibmc_rndv.h"
#include "ibmc_sendq.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_IBMC_EAGER_LIMIT
      category    : CH4_IBMC
      type        : int
      default     : 16384
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Largest message, in data bytes, sent eagerly: copied through the
        registered eager buffers (as several packets if it does not fit one)
        without waiting for the receiver.  Larger contiguous messages use the
        zero-copy rendezvous protocol: the receiver reads the data from the
        sender's buffer with RDMA READ once the receive is matched.  Larger
        non-contiguous messages use MPIDIG's rendezvous handshake and are
        packed.  0 sends every contiguous message that carries data by
        rendezvous.  At most MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE.  It sets
        the packet size (MPIR_CVAR_IBMC_PACKET_SIZE), so all processes must
        agree.  How to choose it for a fabric: run bench/eager-limit.sh; why
        16 KiB: doc/design.md, "Eager path and credit flow control".

    - name        : MPIR_CVAR_IBMC_RNDV_WINDOW
      category    : CH4_IBMC
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Give the receiver of a rendezvous read access to exactly the
        message's buffer, for exactly the transfer: a type 2 memory window
        bound before the offer goes out and invalidated before the send
        completes, so that no peer can read this process's memory with an
        old rkey after the buffer is freed and reused.  Registrations then
        grant no remote access of their own.  Used where the device supports
        type 2 memory windows (ibv_devinfo -v: MEM_WINDOW_TYPE_2B); elsewhere,
        or with false, the receiver gets the rkey of the cached registration,
        which stays valid until the registration cache evicts it.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* A type 2 memory window and the rkey of its latest bind. */
typedef struct MPIDI_IBMC_mw {
    struct ibv_mw *mw;
    uint32_t rkey;
    struct MPIDI_IBMC_mw *next; /* in the free pool */
} MPIDI_IBMC_mw_t;

/* The sender's half of a rendezvous: its buffer stays registered, and the
 * request incomplete, until the receiver's IBMC_PKT_RNDV_FIN and, with a
 * memory window, until the window is invalidated. */
typedef struct MPIDI_IBMC_rndv_send {
    MPIR_Request *sreq;
    int handler_id;
    int peer;
    MPIDI_IBMC_reg_t reg;
    const void *buf;
    size_t len;
    MPIDI_IBMC_mw_t *mw;        /* the peer reads through it; NULL: through reg's rkey */
    struct MPIDI_IBMC_rndv_send *next;  /* waiting for its window's invalidation */
    MPIDI_IBMC_wr_ctx_t bind_wr, inv_wr;        /* the window's bind and invalidation */
} MPIDI_IBMC_rndv_send_t;

/* The receiver's half: RDMA READs from the sender's buffer straight into the
 * matched receive buffer (or, when that is not contiguous, into a bounce
 * buffer that is then unpacked). */
typedef struct MPIDI_IBMC_rdma_read {
    struct MPIDI_IBMC_rdma_read *next;
    MPIR_Request *rreq;
    int peer;
    uint64_t raddr;
    uint32_t rkey;
    uint64_t cookie;
    char *laddr;
    size_t len, posted, done;
    int wrs_inflight;
    MPIDI_IBMC_reg_t reg;
    char *bounce;               /* non-NULL: laddr is this, unpack when done */
    int stale_probe;            /* MPIR_CVAR_IBMC_FAULT_QP_ERROR's read of a finished transfer */
    MPIDI_IBMC_wr_ctx_t wr;     /* every READ work request of the transfer */
} MPIDI_IBMC_rdma_read_t;

static int post_reads(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn);

#define RNDV_RREQ(rreq) (MPIDIG_REQUEST(rreq, netmod_am.ibmc))

/* ---- the sender's window onto its buffer ----
 *
 * Registrations outlive their transfers in the cache, so they allow no
 * remote access; each rendezvous send binds a type 2 memory window over
 * exactly its buffer, for remote read, on the queue pair to its one
 * receiver, and invalidates it when the FIN comes, before the send
 * completes.  The bind goes down the send queue in front of the
 * IBMC_PKT_RNDV packet that carries its rkey, so the peer cannot read
 * before it is in place.  Devices without type 2 windows (or
 * MPIR_CVAR_IBMC_RNDV_WINDOW=false) give the peer the registration's rkey.
 * Why: doc/design.md, "Rendezvous". */

static MPIDI_IBMC_mw_t *mw_get(MPIDI_IBMC_state_t * st)
{
    MPIDI_IBMC_mw_t *w = st->mw_pool;
    if (w) {
        st->mw_pool = w->next;
        return w;
    }
    w = MPL_malloc(sizeof(*w), MPL_MEM_OTHER);
    if (!w)
        return NULL;
    w->mw = ibv_alloc_mw(st->hca.pd, IBV_MW_TYPE_2);
    if (!w->mw) {
        MPL_free(w);
        return NULL;
    }
    w->rkey = w->mw->rkey;
    return w;
}

static void mw_put(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mw_t * w)
{
    w->next = st->mw_pool;
    st->mw_pool = w;
}

static int can_bind(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    /* the bind leaves a slot for the packet that follows it */
    return conn->sq_inflight + 1 < st->sq_depth && st->mw_ops_inflight < st->max_mw_ops;
}

static int post_bind(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn,
                     MPIDI_IBMC_rndv_send_t * rs)
{
    struct ibv_send_wr wr, *bad;

    memset(&wr, 0, sizeof(wr));
    wr.wr_id = MPIDI_IBMC_wr_id_ctx(&rs->bind_wr, IBMC_WR_MW_BIND);
    wr.opcode = IBV_WR_BIND_MW;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.bind_mw.mw = rs->mw->mw;
    wr.bind_mw.rkey = rs->mw->rkey;
    wr.bind_mw.bind_info.mr = rs->reg.mr;
    wr.bind_mw.bind_info.addr = (uint64_t) (uintptr_t) rs->buf;
    wr.bind_mw.bind_info.length = rs->len;
    wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
    int rc = ibv_post_send(conn->qp, &wr, &bad);
    if (rc)
        return MPIDI_IBMC_VERBS_ERROR("ibv_post_send(BIND_MW)", rc);
    /* the provider names the window by ibv_mw's rkey in the next bind, and
     * the device knows it by the new one from now on */
    rs->mw->mw->rkey = rs->mw->rkey;
    conn->sq_inflight++;
    st->mw_ops_inflight++;
    MPIDI_IBMC_pvars.rndv_windows++;
    return MPI_SUCCESS;
}

/* The send queue's pre-post step of an IBMC_PKT_RNDV packet: its window
 * is bound before the packet that names it goes (send-queue order). */
static int bind_window(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, void *arg, int *posted)
{
    *posted = can_bind(st, conn);
    return *posted ? post_bind(st, conn, arg) : MPI_SUCCESS;
}

/* Invalidate the windows whose FIN has come, as far as slots allow; the
 * rest wait on the connection's list (it stays busy). */
static int post_invs(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    while (conn->inv_head && conn->sq_inflight < st->sq_depth &&
           st->mw_ops_inflight < st->max_mw_ops) {
        MPIDI_IBMC_rndv_send_t *rs = conn->inv_head;
        struct ibv_send_wr wr, *bad;

        memset(&wr, 0, sizeof(wr));
        wr.wr_id = MPIDI_IBMC_wr_id_ctx(&rs->inv_wr, IBMC_WR_MW_INV);
        wr.opcode = IBV_WR_LOCAL_INV;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.invalidate_rkey = rs->mw->rkey;
        int rc = ibv_post_send(conn->qp, &wr, &bad);
        if (rc)
            return MPIDI_IBMC_VERBS_ERROR("ibv_post_send(LOCAL_INV)", rc);
        conn->sq_inflight++;
        st->mw_ops_inflight++;
        conn->inv_head = rs->next;
        if (!conn->inv_head)
            conn->inv_tail = NULL;
        rs->next = NULL;
    }
    if (conn->inv_head)
        MPIDI_IBMC_conn_mark_busy(st, conn);
    return MPI_SUCCESS;
}

/* The receiver has all the data and nobody can read the buffer any more:
 * give the registration back and complete the send. */
static int send_done(MPIDI_IBMC_state_t * st, MPIDI_IBMC_rndv_send_t * rs)
{
    int mpi_errno = MPI_SUCCESS;
    if (rs->mw)
        mw_put(st, rs->mw);
    MPIDI_IBMC_mem_release(st, &rs->reg);
    if (rs->sreq)
        mpi_errno = MPIDIG_global.origin_cbs[rs->handler_id] (rs->sreq);
    MPL_free(rs);
    return mpi_errno;
}

static int mw_done(MPIDI_IBMC_state_t * st, int kind, MPIDI_IBMC_rndv_send_t * rs)
{
    MPIDI_IBMC_conn_t *conn = &st->conns[rs->peer];
    conn->sq_inflight--;
    st->mw_ops_inflight--;
    return kind == IBMC_WR_MW_BIND ? MPI_SUCCESS : send_done(st, rs);
}

int MPIDI_IBMC_rndv_send(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, int handler_id,
                         const void *am_hdr, MPI_Aint am_hdr_sz, const void *buf,
                         MPI_Aint data_sz, int src_vci, int dst_vci, MPIR_Request * sreq,
                         int *sent)
{
    int mpi_errno = MPI_SUCCESS;
    ibmc_rndv_t info;

    *sent = 0;
    MPIDI_IBMC_rndv_send_t *rs = MPL_calloc(1, sizeof(*rs), MPL_MEM_OTHER);
    MPIR_ERR_CHKANDJUMP(!rs, mpi_errno, MPI_ERR_OTHER, "**nomem");
    if (MPIDI_IBMC_mem_register(st, buf, (size_t) data_sz, &rs->reg)) {
        /* e.g. over the locked-memory limit: the caller copies instead */
        MPL_free(rs);
        goto fn_exit;
    }
    if (st->use_mw && !(rs->mw = mw_get(st))) {
        /* out of windows (the device's max_mw): copy instead */
        MPIDI_IBMC_mem_release(st, &rs->reg);
        MPL_free(rs);
        goto fn_exit;
    }
    rs->sreq = sreq;
    rs->handler_id = handler_id;
    rs->peer = conn->rank;
    rs->buf = buf;
    rs->len = (size_t) data_sz;
    memset(&info, 0, sizeof(info));
    /* the FIN names this state by a cookie only this peer can spend once */
    if (ibmc_cookie_put(&st->rndv_cookies, rs, conn->rank, &info.cookie)) {
        if (rs->mw)
            mw_put(st, rs->mw);
        MPIDI_IBMC_mem_release(st, &rs->reg);
        MPL_free(rs);
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OTHER, "**nomem");
    }
    info.addr = (uint64_t) (uintptr_t) buf;
    if (rs->mw) {
        /* each bind gives the window a new key (its low byte moves on), so
         * an rkey handed out for an earlier transfer never names this one */
        rs->mw->rkey = ibv_inc_rkey(rs->mw->rkey);
        info.rkey = rs->mw->rkey;
    } else {
        info.rkey = rs->reg.mr->rkey;
    }
    mpi_errno = MPIDI_IBMC_send_ctrl(st, conn, IBMC_PKT_RNDV, handler_id, am_hdr, am_hdr_sz,
                                     &info, (MPI_Aint) sizeof(info), data_sz, src_vci, dst_vci,
                                     rs->mw ? bind_window : NULL, rs);
    if (mpi_errno) {
        /* nobody will send a FIN for an offer that never left */
        ibmc_cookie_take(&st->rndv_cookies, info.cookie, conn->rank);
        if (rs->mw)
            mw_put(st, rs->mw);
        MPIDI_IBMC_mem_release(st, &rs->reg);
        MPL_free(rs);
        MPIR_ERR_POP(mpi_errno);
    }
    conn->rndv_tx++;
    MPIDI_IBMC_pvars.rndv_sends++;
    *sent = 1;
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_IBMC_rndv_fin(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, const char *payload,
                        size_t plen)
{
    ibmc_rndv_fin_t fin;

    if (plen < sizeof(fin))
        return MPIDI_IBMC_PROTO_ERROR(conn->rank, "a short rendezvous completion");
    memcpy(&fin, payload, sizeof(fin));
    MPIDI_IBMC_rndv_send_t *rs = ibmc_cookie_take(&st->rndv_cookies, fin.cookie, conn->rank);
    if (!rs)
        return MPIDI_IBMC_PROTO_ERROR(conn->rank, "a rendezvous completion for no transfer of "
                                      "ours to it (unknown, repeated or another peer's)");
    if (!rs->mw)
        return send_done(st, rs);
    /* the send completes once the window is gone */
    if (conn->inv_tail)
        conn->inv_tail->next = rs;
    else
        conn->inv_head = rs;
    conn->inv_tail = rs;
    return post_invs(st, conn);
}

/* At finalize: transfers a peer never finished (it died, or the job is
 * aborting) give their registrations back before the device closes. */
void MPIDI_IBMC_rndv_free_all(MPIDI_IBMC_state_t * st)
{
    uint32_t pos = 0;
    MPIDI_IBMC_rndv_send_t *rs;
    while ((rs = ibmc_cookie_next_live(&st->rndv_cookies, &pos))) {
        if (rs->mw)
            mw_put(st, rs->mw);
        MPIDI_IBMC_mem_release(st, &rs->reg);
        MPL_free(rs);
    }
    ibmc_cookie_destroy(&st->rndv_cookies);
    /* windows go before the memory regions they were bound to */
    while (st->mw_pool) {
        MPIDI_IBMC_mw_t *w = st->mw_pool;
        st->mw_pool = w->next;
        ibv_dealloc_mw(w->mw);
        MPL_free(w);
    }
}

/* MPIR_CVAR_IBMC_FAULT_QP_ERROR=stale_read=N: read from the sender again
 * with the rkey of the transfer `done` just finished, which must fail. */
static int stale_read(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn,
                      const MPIDI_IBMC_rdma_read_t * done)
{
    int mpi_errno = MPI_SUCCESS;

    /* the sender processes the FIN meanwhile (it is another process) */
    sleep(1);
    MPIDI_IBMC_rdma_read_t *rd = MPL_calloc(1, sizeof(*rd), MPL_MEM_OTHER);
    MPIR_ERR_CHKANDJUMP(!rd, mpi_errno, MPI_ERR_OTHER, "**nomem");
    rd->stale_probe = 1;
    rd->peer = conn->rank;
    rd->raddr = done->raddr;
    rd->rkey = done->rkey;
    rd->len = MPL_MIN(done->len, 4096);
    rd->bounce = MPL_malloc(rd->len, MPL_MEM_BUFFER);
    MPIR_ERR_CHKANDJUMP(!rd->bounce, mpi_errno, MPI_ERR_OTHER, "**nomem");
    rd->laddr = rd->bounce;
    if (MPIDI_IBMC_mem_register(st, rd->laddr, rd->len, &rd->reg))
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OTHER, "**nomem");
    fprintf(stderr, "ibmc: MPIR_CVAR_IBMC_FAULT_QP_ERROR reads %zu bytes from rank %d again "
            "with the rkey %#x of a finished transfer\n", rd->len, rd->peer, rd->rkey);
    if (conn->rd_tail)
        conn->rd_tail->next = rd;
    else
        conn->rd_head = rd;
    conn->rd_tail = rd;
    mpi_errno = post_reads(st, conn);
  fn_fail:
    return mpi_errno;
}

/* All data is in: unpack if we bounced, tell the sender, complete the receive
 * (target_cmpl_cb, then the reference rndv_recv took). */
static int read_finish(MPIDI_IBMC_state_t * st, MPIDI_IBMC_rdma_read_t * rd)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Request *rreq = rd->rreq;
    MPIDI_IBMC_conn_t *conn = &st->conns[rd->peer];
    ibmc_rndv_fin_t fin = {.cookie = rd->cookie };

    if (rd->bounce && rd->len > 0) {
        MPI_Aint actual = 0;
        mpi_errno = MPIR_Typerep_unpack(rd->bounce, (MPI_Aint) rd->len,
                                        MPIDIG_REQUEST(rreq, buffer), MPIDIG_REQUEST(rreq, count),
                                        MPIDIG_REQUEST(rreq, datatype), 0, &actual);
        MPIR_ERR_CHECK(mpi_errno);
        MPIR_Assert(actual == (MPI_Aint) rd->len);
        conn->rndv_bounced++;
        MPIDI_IBMC_pvars.rndv_packed_recvs++;
    }
    if (rd->reg.mr)
        MPIDI_IBMC_mem_release(st, &rd->reg);
    MPL_free(rd->bounce);
    rd->bounce = NULL;
    conn->rndv_rx++;
    conn->rndv_read_bytes += rd->len;
    MPIDI_IBMC_pvars.rndv_recvs++;

    mpi_errno = MPIDI_IBMC_send_ctrl(st, conn, IBMC_PKT_RNDV_FIN, 0, NULL, 0, &fin,
                                     (MPI_Aint) sizeof(fin), 0, 0, 0, NULL, NULL);
    MPIR_ERR_CHECK(mpi_errno);
    if (unlikely(st->qp_fault_at) && MPIDI_IBMC_qp_fault_stale_read_due(st)) {
        mpi_errno = stale_read(st, conn, rd);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = MPIDIG_REQUEST(rreq, req->target_cmpl_cb) (rreq);
    MPIR_ERR_CHECK(mpi_errno);
    MPID_Request_complete(rreq);
  fn_exit:
    MPL_free(rd);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The receive is matched: decide where the data lands and queue the READs. */
static int read_start(MPIDI_IBMC_state_t * st, MPIR_Request * rreq)
{
    int mpi_errno = MPI_SUCCESS;
    int contig, err = 0;
    MPI_Aint cap, true_lb;
    MPIR_Datatype *dt_ptr;
    MPIDI_IBMC_conn_t *conn = &st->conns[RNDV_RREQ(rreq).peer];

    MPIDI_Datatype_get_info(MPIDIG_REQUEST(rreq, count), MPIDIG_REQUEST(rreq, datatype), contig,
                            cap, dt_ptr, true_lb);
    MPIDI_IBMC_rdma_read_t *rd = MPL_calloc(1, sizeof(*rd), MPL_MEM_OTHER);
    MPIR_ERR_CHKANDJUMP(!rd, mpi_errno, MPI_ERR_OTHER, "**nomem");
    rd->rreq = rreq;
    rd->peer = conn->rank;
    rd->raddr = RNDV_RREQ(rreq).addr;
    rd->rkey = RNDV_RREQ(rreq).rkey;
    rd->cookie = RNDV_RREQ(rreq).cookie;
    /* a short receive buffer: MPIDIG has set MPI_ERR_TRUNCATE; read what fits */
    rd->len = (size_t) MPL_MIN(RNDV_RREQ(rreq).data_sz, cap);
    MPIR_STATUS_SET_COUNT(rreq->status, (MPI_Aint) rd->len);
    if (rd->len == 0)
        return read_finish(st, rd);

    if (contig) {
        rd->laddr = MPIR_get_contig_ptr(MPIDIG_REQUEST(rreq, buffer), true_lb);
        err = MPIDI_IBMC_mem_register(st, rd->laddr, rd->len, &rd->reg);
    }
    if (!contig || err) {
        rd->bounce = MPL_malloc(rd->len, MPL_MEM_BUFFER);
        MPIR_ERR_CHKANDJUMP(!rd->bounce, mpi_errno, MPI_ERR_OTHER, "**nomem");
        rd->laddr = rd->bounce;
        err = MPIDI_IBMC_mem_register(st, rd->laddr, rd->len, &rd->reg);
        if (err) {
            mpi_errno = MPIDI_IBMC_VERBS_ERROR("ibv_reg_mr", err);
            goto fn_fail;
        }
    }

    if (conn->rd_tail)
        conn->rd_tail->next = rd;
    else
        conn->rd_head = rd;
    conn->rd_tail = rd;
    if (conn->cm.state == IBMC_CM_CONNECTED)
        mpi_errno = post_reads(st, conn);
    else
        MPIDI_IBMC_conn_mark_busy(st, conn);
  fn_exit:
    return mpi_errno;
  fn_fail:
    if (rd) {
        MPL_free(rd->bounce);
        MPL_free(rd);
    }
    goto fn_exit;
}

/* MPIDIG calls this when a receive matches an unexpected rendezvous message
 * (see MPIDI_NM_am_get_data_copy_cb). */
int MPIDI_IBMC_rndv_copy_cb(MPIR_Request * rreq)
{
    return read_start(MPIDI_IBMC_STATE(), rreq);
}

int MPIDI_IBMC_rndv_recv(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn,
                         const ibmc_pkt_view_t * v)
{
    int mpi_errno = MPI_SUCCESS;
    ibmc_rndv_t info;
    uint32_t attr = MPIDIG_AM_ATTR__IS_ASYNC | MPIDIG_AM_ATTR__IS_RNDV;
    MPIR_Request *rreq = NULL;

    /* ibmc_pkt_parse checked that the header and `info` are in the packet */
    memcpy(&info, v->payload + v->am_hdr_sz, sizeof(info));
    MPI_Aint data_sz = (MPI_Aint) (v->msg_sz - v->am_hdr_sz);

    MPIDIG_AM_ATTR_SET_VCIS(attr, v->src_vci, v->dst_vci);
    mpi_errno = MPIDIG_global.target_msg_cbs[v->handler_id] ((void *) v->payload, NULL, data_sz,
                                                             attr, &rreq);
    MPIR_ERR_CHECK(mpi_errno);
    if (!rreq)
        return MPIDI_IBMC_PROTO_ERROR(conn->rank, "a rendezvous message for a handler without a request");

    /* held until read_finish, as the other CH4 transports do for async data */
    MPIR_cc_inc(rreq->cc_ptr);
    RNDV_RREQ(rreq).addr = info.addr;
    RNDV_RREQ(rreq).cookie = info.cookie;
    RNDV_RREQ(rreq).rkey = info.rkey;
    RNDV_RREQ(rreq).peer = conn->rank;
    RNDV_RREQ(rreq).data_sz = data_sz;
    /* unexpected: MPIDIG calls MPIDI_IBMC_rndv_copy_cb when a receive matches */
    if (MPIDIG_recv_initialized(rreq))
        mpi_errno = read_start(st, rreq);
  fn_fail:
    return mpi_errno;
}

static int post_reads(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    int mpi_errno = MPI_SUCCESS;

    while (conn->rd_head && conn->sq_inflight < st->sq_depth &&
           st->reads_inflight < st->max_reads) {
        MPIDI_IBMC_rdma_read_t *rd = conn->rd_head;
        size_t chunk = MPL_MIN(st->max_read, rd->len - rd->posted);
        struct ibv_sge sge = {
            .addr = (uintptr_t) (rd->laddr + rd->posted),
            .length = (uint32_t) chunk,
            .lkey = rd->reg.mr->lkey
        };
        struct ibv_send_wr wr, *bad;

        memset(&wr, 0, sizeof(wr));
        wr.wr_id = MPIDI_IBMC_wr_id_ctx(&rd->wr, IBMC_WR_RDMA_READ);
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_READ;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.wr.rdma.remote_addr = rd->raddr + rd->posted;
        wr.wr.rdma.rkey = rd->rkey;
        int rc = ibv_post_send(conn->qp, &wr, &bad);
        if (rc) {
            mpi_errno = MPIDI_IBMC_VERBS_ERROR("ibv_post_send(RDMA READ)", rc);
            goto fn_fail;
        }
        conn->sq_inflight++;
        if (unlikely(st->qp_fault_at))
            MPIDI_IBMC_qp_fault_posted(st, conn->qp, 1);
        st->reads_inflight++;
        rd->wrs_inflight++;
        MPIDI_IBMC_pvars.rdma_reads++;
        MPIDI_IBMC_pvars.rdma_read_bytes += chunk;
        rd->posted += chunk;
        if (rd->posted == rd->len) {
            conn->rd_head = rd->next;
            if (!conn->rd_head)
                conn->rd_tail = NULL;
            rd->next = NULL;
        }
    }
    if (conn->rd_head)
        MPIDI_IBMC_conn_mark_busy(st, conn);
  fn_fail:
    return mpi_errno;
}

static int read_done(MPIDI_IBMC_state_t * st, MPIDI_IBMC_rdma_read_t * rd)
{
    MPIDI_IBMC_conn_t *conn = &st->conns[rd->peer];
    conn->sq_inflight--;
    st->reads_inflight--;
    rd->wrs_inflight--;
    if (unlikely(rd->stale_probe)) {
        /* the sender's memory was still open to a finished transfer's rkey */
        fprintf(stderr, "ibmc: MPIR_CVAR_IBMC_FAULT_QP_ERROR: the read with a finished "
                "transfer's rkey from rank %d succeeded\n", rd->peer);
        MPIDI_IBMC_mem_release(st, &rd->reg);
        MPL_free(rd->bounce);
        MPL_free(rd);
        return MPI_SUCCESS;
    }
    if (rd->wrs_inflight == 0 && rd->posted == rd->len)
        return read_finish(st, rd);
    /* the freed slot may let a waiting READ go out */
    if (conn->rd_head)
        MPIDI_IBMC_conn_mark_busy(st, conn);
    return MPI_SUCCESS;
}

int MPIDI_IBMC_rndv_service(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    if (conn->cm.state != IBMC_CM_CONNECTED)
        return MPI_SUCCESS;
    int mpi_errno = post_reads(st, conn);
    if (!mpi_errno && conn->inv_head)
        mpi_errno = post_invs(st, conn);
    return mpi_errno;
}

int MPIDI_IBMC_rndv_completion(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc)
{
    int kind = MPIDI_IBMC_wr_kind(wc->wr_id);
    if (kind == IBMC_WR_RDMA_READ) {
        MPIDI_IBMC_rdma_read_t *rd = MPIDI_IBMC_WR_OWNER(wc->wr_id, MPIDI_IBMC_rdma_read_t, wr);
        if (wc->status != IBV_WC_SUCCESS)
            return MPIDI_IBMC_wc_error("rendezvous RDMA READ", rd->peer, wc);
        return read_done(st, rd);
    }
    MPIDI_IBMC_rndv_send_t *rs = kind == IBMC_WR_MW_BIND ?
        MPIDI_IBMC_WR_OWNER(wc->wr_id, MPIDI_IBMC_rndv_send_t, bind_wr) :
        MPIDI_IBMC_WR_OWNER(wc->wr_id, MPIDI_IBMC_rndv_send_t, inv_wr);
    if (wc->status != IBV_WC_SUCCESS)
        return MPIDI_IBMC_wc_error(kind == IBMC_WR_MW_BIND ? "rendezvous memory-window bind" :
                                   "rendezvous memory-window invalidation", rs->peer, wc);
    return mw_done(st, kind, rs);
}
