/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L5, multicast glue: io (L5.4, beside the receive path, which it
 * does not call).  Below: device (sends reaped, posts to a group), place
 * (a persistent broadcast's receiver armed and disarmed), the
 * send queue's MPIDI_IBMC_send_ctrl (L4), the netmod's lower layers
 * (the wait turn of ../ibmc_util.h, the clock of ../ibmc_types.h).  Above: bcast (L5.5), which hands
 * this table down to setup (MPIDI_IBMC_mcast_chan_setup's ops), where the
 * engine is made.  One call goes up: the engine's poll op turns the
 * netmod's progress (L7, io_poll).
 *
 * The engine's operations (ibmc_mcast_ops_t) on verbs: a multicast packet
 * is a UD send to the channel's group from the root's registered ring, an
 * RC message an IBMC_PKT_MCAST control packet on the member's connection,
 * an ACK or a barrier arrival an inline RDMA write into the member's board.  io is the
 * netmod's state (MPIDI_IBMC_state_t).
 *
 * A root's packets are queued by post and sent by flush as one list: one
 * ibv_post_send, one doorbell, for every packet the window allows.  Only
 * every IBMC_MCAST_SIGNAL_EVERY-th send of a list, and its last, asks for
 * a completion, which then stands for itself and the unsignaled ones
 * before it (its wr_id counts them): a UD send queue completes in order. */

#include <mpidimpl.h>
#include "../ibmc_types.h"
#include "../ibmc_util.h"
#include "../ibmc_sendq.h"
#include "ibmc_mcast_impl.h"

#define IBMC_MCAST_SIGNAL_EVERY 16

/* Queued; the engine never queues more than post_room allowed. */
static int io_post(void *io, ibmc_mcast_chan_t * ch, const void *pkt, size_t len)
{
    MPIDI_IBMC_mcast_t *mc = ((MPIDI_IBMC_state_t *) io)->mcast;
    MPIDI_IBMC_mcast_chan_t *c = MPIDI_IBMC_mcast_chan_of(ch);
    const MPIDI_IBMC_mcast_group_t *g = &mc->groups[c->group];
    struct ibv_sge *sge = &mc->pending_sge[mc->npending];
    struct ibv_send_wr *wr = &mc->pending_wr[mc->npending];
    sge->addr = (uintptr_t) pkt;
    sge->length = (uint32_t) len;
    sge->lkey = c->ring_mr->lkey;
    memset(wr, 0, sizeof(*wr));
    wr->sg_list = sge;
    wr->num_sge = 1;
    wr->opcode = IBV_WR_SEND;
    wr->wr.ud.ah = g->ah;
    wr->wr.ud.remote_qpn = 0xffffff;    /* the multicast QPN */
    wr->wr.ud.remote_qkey = g->qkey;
    if (mc->npending)
        mc->pending_wr[mc->npending - 1].next = wr;
    mc->npending++;
    mc->sq_inflight++;
    return MPI_SUCCESS;
}

static int io_flush(void *io, ibmc_mcast_chan_t * ch)
{
    MPIDI_IBMC_mcast_t *mc = ((MPIDI_IBMC_state_t *) io)->mcast;
    struct ibv_send_wr *bad;
    (void) ch;
    if (!mc->npending)
        return MPI_SUCCESS;
    int covered = 0;
    for (int i = 0; i < mc->npending; i++) {
        covered++;
        if (covered == IBMC_MCAST_SIGNAL_EVERY || i == mc->npending - 1) {
            mc->pending_wr[i].send_flags = IBV_SEND_SIGNALED;
            mc->pending_wr[i].wr_id = (uint64_t) covered;
            covered = 0;
        }
    }
    int rc = ibv_post_send(mc->qp, &mc->pending_wr[0], &bad);
    mc->npending = 0;
    MPIDI_IBMC_pvars.mcast.post_calls++;
    return rc ? MPIDI_IBMC_VERBS_ERROR("ibv_post_send(multicast)", rc) : MPI_SUCCESS;
}

static int io_post_room(void *io, ibmc_mcast_chan_t * ch);

/* Inline, so the packet need not be registered or outlive the call: one
 * signaled send of its own, after any queued ones. */
static int io_post_ctl(void *io, ibmc_mcast_chan_t * ch, const void *pkt, size_t len, int *sent)
{
    MPIDI_IBMC_mcast_t *mc = ((MPIDI_IBMC_state_t *) io)->mcast;
    MPIDI_IBMC_mcast_chan_t *c = MPIDI_IBMC_mcast_chan_of(ch);
    *sent = 0;
    if (len > mc->max_inline || io_post_room(io, ch) <= 0)
        return MPI_SUCCESS;
    int mpi_errno = io_flush(io, ch);
    if (mpi_errno)
        return mpi_errno;
    int rc = MPIDI_IBMC_mcast_post_to_group(mc, &mc->groups[c->group], pkt, len, 0,
                                            IBV_SEND_INLINE);
    if (rc)
        return MPIDI_IBMC_VERBS_ERROR("ibv_post_send(multicast question)", rc);
    MPIDI_IBMC_pvars.mcast.post_calls++;
    *sent = 1;
    return MPI_SUCCESS;
}

/* No more sends in flight than the window: a ring slot is only rewritten a
 * window later, when its send has completed.  A queue that looks full is
 * reaped first (sends complete on their own queue), so a root that
 * streams still posts a whole message with one call. */
static int io_post_room(void *io, ibmc_mcast_chan_t * ch)
{
    MPIDI_IBMC_mcast_t *mc = ((MPIDI_IBMC_state_t *) io)->mcast;
    int limit = MPL_MIN(mc->sq_depth, (int) ibmc_mcast_chan_window(ch)), found;
    if (mc->sq_inflight >= limit && MPIDI_IBMC_mcast_reap_sends(mc, &found) != MPI_SUCCESS)
        return 0;               /* the QP failed: the next poll reports it */
    return limit - mc->sq_inflight;
}

static int io_send_rc(void *io, ibmc_mcast_chan_t * ch, int to, const ibmc_mcast_rc_t * h,
                   const void *pkt, size_t len, uint16_t pkt_flags)
{
    MPIDI_IBMC_state_t *st = io;
    MPIDI_IBMC_mcast_chan_t *c = MPIDI_IBMC_mcast_chan_of(ch);
    char buf[sizeof(ibmc_mcast_rc_t) + 4096 + sizeof(ibmc_mcast_hdr_t)];
    /* the packets come from this process's rings, one path MTU each */
    if (len > sizeof(buf) - sizeof(*h) || (pkt_flags && len < sizeof(ibmc_mcast_hdr_t)))
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_FATAL, __func__, __LINE__,
                                    MPI_ERR_INTERN, "**intern", "**intern %s",
                                    "a multicast packet does not fit an RC message");
    memcpy(buf, h, sizeof(*h));
    if (len)
        memcpy(buf + sizeof(*h), pkt, len);
    if (pkt_flags) {
        ibmc_mcast_hdr_t ph;
        memcpy(&ph, buf + sizeof(*h), sizeof(ph));
        ph.flags |= pkt_flags;
        memcpy(buf + sizeof(*h), &ph, sizeof(ph));
    }
    return MPIDI_IBMC_send_ctrl(st, &st->conns[c->world[to]], IBMC_PKT_MCAST, 0, NULL, 0, buf,
                                (MPI_Aint) (sizeof(*h) + len), 0, 0, 0, NULL, NULL);
}

/* An inline RDMA write of len bytes into `to`'s board at byte offset
 * `offset`: the bytes are taken at the call and need no registered copy.
 * It goes when `to` has a board and the connection can take it now:
 * connected, nothing queued ahead (so that a queued RC ACK does not arrive
 * after a newer written one; the root would only count it as old), room in
 * the send queue, and len within the RC QPs' inline size. */
static int board_write(MPIDI_IBMC_state_t * st, ibmc_mcast_chan_t * ch, int to, uint64_t offset,
                       const void *data, size_t len, int *written)
{
    MPIDI_IBMC_mcast_chan_t *c = MPIDI_IBMC_mcast_chan_of(ch);
    MPIDI_IBMC_conn_t *conn = &st->conns[c->world[to]];
    *written = 0;
    if (!c->peer_board[to] || !conn->qp || conn->cm.state != IBMC_CM_CONNECTED ||
        conn->q_head || conn->need_rtu || conn->sq_inflight >= st->sq_depth ||
        st->hca.rc_max_inline < len)
        return MPI_SUCCESS;
    struct ibv_sge sge = {.addr = (uintptr_t) data,.length = (uint32_t) len,.lkey = 0 };
    struct ibv_send_wr wr, *bad;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = MPIDI_IBMC_wr_id_index(IBMC_WR_INLINE_WRITE, (uint32_t) conn->rank);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
    wr.wr.rdma.remote_addr = c->peer_board[to] + offset;
    wr.wr.rdma.rkey = c->peer_rkey[to];
    int rc = ibv_post_send(conn->qp, &wr, &bad);
    if (rc)
        return MPIDI_IBMC_VERBS_ERROR("ibv_post_send(multicast board write)", rc);
    conn->sq_inflight++;
    *written = 1;
    return MPI_SUCCESS;
}

/* An ACK or arrival count: member ch->rank's word of `to`'s board `which`. */
static int io_write_board(void *io, ibmc_mcast_chan_t * ch, int to, int which, uint64_t word,
                          int *written)
{
    uint64_t offset = ((uint64_t) which * (uint64_t) ch->size + (uint64_t) ch->rank) *
        sizeof(uint64_t);
    return board_write(io, ch, to, offset, &word, sizeof(word), written);
}

/* A small allreduce's partial result (IBMC_MCAST_PARTIAL_BYTES at most). */
static int io_write_data(void *io, ibmc_mcast_chan_t * ch, int to, size_t offset,
                         const void *data, size_t len, int *written)
{
    return board_write(io, ch, to, offset, data, len, written);
}

/* A persistent broadcast's receiver (ibmc_mcast_place.c) */
static int io_place_arm(void *io, ibmc_mcast_chan_t * ch, void *place, void *buf, uint64_t len,
                        uint32_t nfrags, int *armed)
{
    return MPIDI_IBMC_mcast_place_arm(io, MPIDI_IBMC_mcast_chan_of(ch), place, buf, len, nfrags,
                                      armed);
}

static int io_place_disarm(void *io, ibmc_mcast_chan_t * ch, void *place)
{
    (void) ch;
    return MPIDI_IBMC_mcast_place_disarm(io, place);
}

static double io_now(void *io)
{
    (void) io;
    return MPIDI_IBMC_now();
}

static int io_wait(void *io)
{
    (void) io;
    return MPIDI_IBMC_wait_turn();
}

/* Under the VCI lock, as everything of the engine's; the netmod's progress
 * alone, which is where the channel's packets come in. */
static int io_poll(void *io)
{
    (void) io;
    return MPIDI_IBMC_poll_turn(0);
}

static void *io_zalloc(void *io, size_t bytes)
{
    (void) io;
    return MPL_calloc(1, bytes, MPL_MEM_OTHER);
}

static void io_free(void *io, void *p)
{
    (void) io;
    MPL_free(p);
}

const ibmc_mcast_ops_t MPIDI_IBMC_mcast_ops = {
    .post = io_post,
    .flush = io_flush,
    .post_ctl = io_post_ctl,
    .post_room = io_post_room,
    .send_rc = io_send_rc,
    .write_board = io_write_board,
    .write_data = io_write_data,
    .now = io_now,
    .wait = io_wait,
    .poll = io_poll,
    .zalloc = io_zalloc,
    .free = io_free,
    .place_arm = io_place_arm,
    .place_disarm = io_place_disarm
};
