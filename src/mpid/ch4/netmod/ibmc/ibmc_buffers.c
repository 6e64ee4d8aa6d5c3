/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <mpidimpl.h>
#include <endian.h>
#include "ibmc_types.h"
#include "ibmc_buffers.h"
#include "ibmc_util.h"

void MPIDI_IBMC_sbuf_release(MPIDI_IBMC_state_t * st, int idx)
{
    st->sbufs[idx].peer = -1;
    st->sbufs[idx].next_free = st->sbuf_free;
    st->sbuf_free = idx;
}

int MPIDI_IBMC_post_rbuf(MPIDI_IBMC_state_t * st, int idx)
{
    struct ibv_sge sge = {
        .addr = (uintptr_t) MPIDI_IBMC_rbuf_addr(st, idx),
        .length = (uint32_t) MPIDI_IBMC_global.packet_size,
        .lkey = MPIDI_IBMC_rbuf_lkey(st, idx)
    };
    struct ibv_recv_wr wr = {
        .wr_id = MPIDI_IBMC_wr_id_index(IBMC_WR_RC_RECV, (uint32_t) idx),
        .sg_list = &sge,
        .num_sge = 1
    }, *bad;
    int rc = ibv_post_srq_recv(st->hca.srq, &wr, &bad);
    return rc ? MPIDI_IBMC_VERBS_ERROR("ibv_post_srq_recv", rc) : MPI_SUCCESS;
}

/* A new connection is promised its base credits + IBMC_CREDIT_SPARE
 * buffers; post a chunk of that many when the posted buffers do not cover
 * the promises yet (windows lent to streaming peers are promises too, see
 * ibmc_credit.h).  Past the shared receive queue's capacity (very large jobs
 * talking to very many peers) the promise cannot be kept, and a sender that
 * finds no buffer gets a receiver-not-ready NAK and retries in hardware
 * (rnr_retry 7): slower, never lost. */
int MPIDI_IBMC_rbuf_reserve(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn)
{
    int mpi_errno = MPI_SUCCESS;
    size_t psz = (size_t) MPIDI_IBMC_global.packet_size;

    ibmc_credit_pool_connect(&st->rpool, &conn->cr);
    if (st->rpool.promised <= st->rpool.posted)
        return MPI_SUCCESS;
    if (st->n_rchunks == st->max_rchunks) {
        /* windows lent earlier give their buffers back first */
        st->rpool.reclaim = 1;
        return MPI_SUCCESS;
    }

    int k = st->n_rchunks;
    char *mem = MPL_aligned_alloc(4096, psz * st->rchunk_bufs, MPL_MEM_BUFFER);
    MPIR_ERR_CHKANDJUMP(!mem, mpi_errno, MPI_ERR_OTHER, "**nomem");
    struct ibv_mr *mr = ibv_reg_mr(st->hca.pd, mem, psz * st->rchunk_bufs,
                                   IBV_ACCESS_LOCAL_WRITE);
    if (!mr) {
        MPL_free(mem);
        return MPIDI_IBMC_VERBS_ERROR("ibv_reg_mr", errno);
    }
    st->rchunk_mem[k] = mem;
    st->rchunk_mr[k] = mr;
    st->n_rchunks++;
    for (int i = 0; i < st->rchunk_bufs; i++) {
        mpi_errno = MPIDI_IBMC_post_rbuf(st, st->n_rbufs + k * st->rchunk_bufs + i);
        MPIR_ERR_CHECK(mpi_errno);
    }
    st->rpool.posted += st->rchunk_bufs;
  fn_fail:
    return mpi_errno;
}

void MPIDI_IBMC_rbuf_free_chunks(MPIDI_IBMC_state_t * st)
{
    for (int k = 0; k < st->n_rchunks; k++) {
        ibv_dereg_mr(st->rchunk_mr[k]);
        MPL_free(st->rchunk_mem[k]);
    }
    st->n_rchunks = 0;
    MPL_free(st->rchunk_mem);
    MPL_free(st->rchunk_mr);
    st->rchunk_mem = NULL;
    st->rchunk_mr = NULL;
}

int MPIDI_IBMC_send_completion(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc)
{
    uint32_t idx = MPIDI_IBMC_wr_index(wc->wr_id);
    /* an inline write holds no buffer: its index is the peer */
    int write = MPIDI_IBMC_wr_kind(wc->wr_id) == IBMC_WR_INLINE_WRITE;
    int peer = write ? (int) idx : st->sbufs[idx].peer;
    if (wc->status != IBV_WC_SUCCESS)
        return MPIDI_IBMC_wc_error(write ? "multicast ACK write" : "RC send", peer, wc);
    st->conns[peer].sq_inflight--;
    if (!write)
        MPIDI_IBMC_sbuf_release(st, (int) idx);
    return MPI_SUCCESS;
}
