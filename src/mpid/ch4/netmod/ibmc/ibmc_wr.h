/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L1 (base): what a work request's id says about its completion.
 *
 * A completion carries its owner's kind, so the progress engine only
 * dispatches on it and each owner handles, and words the errors of, its
 * own completions (as MPICH ofi's completions name their event, and UCX's
 * send operations their handler).  Two forms share the 64 bits:
 *   - a buffer of a pool, by index: low bit 1, the kind in bits 1-7, the
 *     index above (RC and datagram buffers, inline writes by peer);
 *   - an operation with state of its own: the address of a
 *     MPIDI_IBMC_wr_ctx_t inside that state, which says the kind (low bit
 *     0: the context is at least 4-byte aligned).
 * Kinds may be added up to 127 of them. */

#ifndef IBMC_WR_H_INCLUDED
#define IBMC_WR_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

enum {
    IBMC_WR_RC_SEND = 1,        /* index: a send buffer (ibmc_buffers.c) */
    IBMC_WR_RC_RECV,            /* index: a receive buffer (ibmc_am_recv.c reads it) */
    IBMC_WR_INLINE_WRITE,       /* index: the world rank a bufferless inline RDMA write
                                 * went to, a multicast ACK (ibmc_buffers.c) */
    IBMC_WR_UD_SEND,            /* index: a datagram send slot (ibmc_ud.c) */
    IBMC_WR_UD_RECV,            /* index: a datagram receive buffer (ibmc_ud.c) */
    IBMC_WR_RDMA_READ,          /* context: a rendezvous READ (ibmc_rndv.c) */
    IBMC_WR_MW_BIND,            /* context: a rendezvous send's window bind */
    IBMC_WR_MW_INV,             /* context: ... and its invalidation after the FIN */
    IBMC_WR_NODESEG,            /* context: a write into a node segment, or a read that
                                 * checks on its node (ibmc_node_allgather.c) */
    IBMC_WR_KINDS
};

typedef struct {
    int kind;                   /* IBMC_WR_* */
} MPIDI_IBMC_wr_ctx_t;

static inline uint64_t MPIDI_IBMC_wr_id_index(int kind, uint32_t idx)
{
    return ((uint64_t) idx << 8) | ((uint64_t) kind << 1) | 1;
}

/* the context says the kind: set it, and name the operation by it */
static inline uint64_t MPIDI_IBMC_wr_id_ctx(MPIDI_IBMC_wr_ctx_t * ctx, int kind)
{
    ctx->kind = kind;
    return (uint64_t) (uintptr_t) ctx;
}

static inline int MPIDI_IBMC_wr_kind(uint64_t wr_id)
{
    if (wr_id & 1)
        return (int) ((wr_id >> 1) & 0x7f);
    return ((const MPIDI_IBMC_wr_ctx_t *) (uintptr_t) wr_id)->kind;
}

static inline uint32_t MPIDI_IBMC_wr_index(uint64_t wr_id)
{
    return (uint32_t) (wr_id >> 8);
}

/* the state an operation's context sits in */
#define MPIDI_IBMC_WR_OWNER(wr_id, type, member) \
    ((type *) ((char *) (uintptr_t) (wr_id) - offsetof(type, member)))

#endif /* IBMC_WR_H_INCLUDED */
