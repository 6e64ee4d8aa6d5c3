/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The netmod's side of the multicast channel, shared by its files, Layer
 * L5 of the netmod, stacked bottom up; each file calls only files below it
 * (maint/layers.txt), and files of one sub-layer do not call each other:
 *   L5.1 ibmc_mcast_device.c    the process's multicast UD queue pair, its
 *                               completion queues and receive pool; posts
 *                               to a group, reaps sends; frees the device
 *   L5.2 ibmc_mcast_group.c     groups joined through rdma_cm, shared
 *                               through the pool (ibmc_mcast_pool.h), and
 *                               the routing probe
 *   L5.3 ibmc_mcast_setup.c     the process's multicast side, made on first
 *                               use; a communicator's channel: members'
 *                               agreement, its ACK board, its release
 *   L5.4 ibmc_mcast_recv.c      what arrives, by multicast or RC, checked
 *                               and handed to the engine; the progress
 *                               engine's poll; serving retiring channels
 *   L5.4 ibmc_mcast_io.c        the engine's operations (ibmc_mcast_ops_t)
 *                               on verbs
 *   L5.5 ibmc_mcast_bcast.c     the CVARs, MPI_Bcast's entry and
 *                               MPI_Comm_free
 *   L5.5 ibmc_mcast_finalize.c  MPI_Finalize's teardown
 * Below them: the engine (ibmc_mcast_engine.h), which owns each channel's
 * state (the glue asks for its transitions), and the netmod's lower
 * layers.  The one table a lower file needs from above, the engine's
 * operations of io, is handed down by bcast as an argument of setup.
 * Everything here runs under the VCI 0 lock, like the rest of the netmod. */

#ifndef IBMC_MCAST_IMPL_H_INCLUDED
#define IBMC_MCAST_IMPL_H_INCLUDED

#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include "ibmc_mcast.h"
#include "ibmc_mcast_engine.h"
#include "ibmc_mcast_faults.h"
#include "ibmc_mcast_pool.h"

/* A registered ACK board's memory (ibmc_mcast_board.h).  It stays
 * registered from its first channel until after MPI_Finalize's last
 * barrier, and later channels reuse it: a member's RDMA write that comes
 * late always lands in registered memory, where its epoch marks it, and
 * never fails the writer's connection. */
typedef struct MPIDI_IBMC_mcast_boardmem {
    struct MPIDI_IBMC_mcast_boardmem *next;
    uint64_t *words;
    int cap;                    /* words */
    int in_use;
    struct ibv_mr *mr;
} MPIDI_IBMC_mcast_boardmem_t;

/* A communicator's channel: the engine's state and what the verbs side
 * keeps beside it. */
typedef struct MPIDI_IBMC_mcast_chan {
    ibmc_mcast_chan_t ch;       /* the protocol (ibmc_mcast_engine.h) */
    struct MPIDI_IBMC_mcast_chan *next;
    char why[160];              /* FAILED: why every member falls back */
    int single_node;            /* FAILED because the communicator is inside one node */
    int group_none;             /* FAILED because the pool had no group for it */
    int told;                   /* why was printed (MPIR_CVAR_IBMC_STATS) */
    int kept;                   /* retired during MPI_Finalize: kept to answer the other
                                 * roots' questions until its barrier (ibmc_finalize.c) */
    int *world;                 /* by communicator rank */
    uint32_t *qpn;              /* their multicast QPs, by communicator rank */
    int group;                  /* its group's entry in the pool, or -1 */
    struct ibv_mr *ring_mr;     /* the root's ring (ch.ring) */
    MPIDI_IBMC_mcast_boardmem_t *board_mem;     /* this process's board, or NULL */
    uint64_t *peer_board;       /* by member: its board's address, 0 if it has none */
    uint32_t *peer_rkey;
} MPIDI_IBMC_mcast_chan_t;

static inline MPIDI_IBMC_mcast_chan_t *MPIDI_IBMC_mcast_chan_of(ibmc_mcast_chan_t * c)
{
    return (MPIDI_IBMC_mcast_chan_t *) ((char *) c - offsetof(MPIDI_IBMC_mcast_chan_t, ch));
}

#define MPIDI_IBMC_MCAST_CHAN(comm) \
    ((MPIDI_IBMC_mcast_chan_t *) (comm)->dev.ch4.netmod.ibmc.coll)

/* What a receive completion said, kept while the fault injector holds it. */
typedef struct {
    uint32_t len, src_qp;
    int has_gid;
    union ibv_gid sgid;
} MPIDI_IBMC_mcast_rmeta_t;

/* The group of one pool entry: joined on first use, kept until MPI_Finalize
 * or until the entry, idle, is given to another group (ibmc_mcast_pool.h). */
typedef struct {
    struct sockaddr_in maddr;
    int joined;                 /* rdma_join_multicast was called: leave it */
    uintptr_t join_id;          /* the join's number, its rdma_cm events' context */
    int join_state;             /* 0 waiting, 1 joined, -1 failed */
    int counted;                /* in the ibmc_mcast_groups pvar */
    int attached;               /* the QP takes its packets: a channel uses it */
    union ibv_gid mgid;
    uint16_t mlid;
    struct ibv_ah *ah;
    uint32_t qkey;
    char why[160];              /* why the join failed */
} MPIDI_IBMC_mcast_group_t;

/* The process's multicast side. */
typedef struct MPIDI_IBMC_mcast {
    int state;                  /* 0 not tried, 1 ready, -1 unusable: why */
    int finalized;              /* only the boards are left (MPIDI_IBMC_mcast_free) */
    int finalizing;             /* MPI_Finalize has begun: retired channels are kept */
    char why[192];
    ibmc_mcast_engine_t eng;
    struct rdma_event_channel *evch;
    struct rdma_cm_id *id;
    int joins_pending;
    uintptr_t joins;            /* joins asked for so far: numbers them from 1 */
    struct ibv_cq *cq;          /* receives */
    struct ibv_cq *scq;         /* sends */
    int send_err;               /* a failed send completion, reported by the next poll */
    struct ibv_qp *qp;
    char *rbufs;
    size_t rbuf_sz;
    int n_rbufs;
    struct ibv_mr *rmr;
    MPIDI_IBMC_mcast_rmeta_t *rmeta;    /* by receive buffer */
    char *probe_pkt;            /* a send buffer after the receive buffers, same MR */
    uint32_t mtu;
    uint32_t payload_max;
    int sq_depth, sq_inflight;  /* sends posted or queued, not yet completed */
    uint32_t max_inline;        /* bytes a send of qp may carry inline */
    struct ibv_send_wr *pending_wr;     /* sq_depth: sends queued for the next flush */
    struct ibv_sge *pending_sge;
    int npending;
    uint32_t epoch_seq;         /* channels this process has set up */
    ibmc_mcast_faults_spec_t fault_spec;
    ibmc_mcast_faults_t faults;
    MPIDI_IBMC_mcast_chan_t *chans;
    int chan_turns;             /* MPIDI_IBMC_mcast_poll's channel loops on the stack */
    MPIDI_IBMC_mcast_boardmem_t *boards;
    struct MPIDI_IBMC_mcast_place *places;      /* persistent broadcasts' in-place receivers */
    int places_armed;           /* of those, the ones whose receives are posted: polled */
    int place_told;             /* a receiver that could not be made was printed
                                 * (MPIR_CVAR_IBMC_STATS) */
    ibmc_mcast_pool_t pool;
    MPIDI_IBMC_mcast_group_t groups[IBMC_MCAST_POOL_MAX];
} MPIDI_IBMC_mcast_t;

/* completions one ibv_poll_cq takes, of sends (device) and receives (recv) */
#define IBMC_MCAST_POLL 16

/* ibmc_mcast_device.c (L5.1) */
/* the device side of mc, its engine, pool and fault injector already made:
 * sets mc->state to 1, or to -1 with mc->why */
void MPIDI_IBMC_mcast_device_init(struct MPIDI_IBMC_state *st, MPIDI_IBMC_mcast_t * mc);
int MPIDI_IBMC_mcast_post_recv(MPIDI_IBMC_mcast_t * mc, int idx);
/* one signaled UD send of [buf, buf+len) to group g, counted in flight,
 * with send_flags added (IBV_SEND_INLINE: buf need not be registered);
 * returns ibv_post_send's answer */
int MPIDI_IBMC_mcast_post_to_group(MPIDI_IBMC_mcast_t * mc, const MPIDI_IBMC_mcast_group_t * g,
                                   const void *buf, size_t len, uint32_t lkey, unsigned send_flags);
/* completed sends off the send queue; *found: completions taken */
int MPIDI_IBMC_mcast_reap_sends(MPIDI_IBMC_mcast_t * mc, int *found);
/* MPI_Finalize, after the groups are left: the QP, its queues, buffers and
 * rdma_cm id go; mc->state becomes -1 (the caller says why) */
void MPIDI_IBMC_mcast_device_free(MPIDI_IBMC_mcast_t * mc);

/* ibmc_mcast_group.c (L5.2) */
void MPIDI_IBMC_mcast_drain_cm_events(MPIDI_IBMC_mcast_t * mc);
int MPIDI_IBMC_mcast_group_join(struct MPIDI_IBMC_state *st, MPIDI_IBMC_mcast_t * mc, int k,
                                uint32_t addr, char *why, size_t whylen);
void MPIDI_IBMC_mcast_group_leave(MPIDI_IBMC_mcast_t * mc, int k);
int MPIDI_IBMC_mcast_group_attach(MPIDI_IBMC_mcast_t * mc, int k, char *why, size_t whylen);
void MPIDI_IBMC_mcast_group_detach(MPIDI_IBMC_mcast_t * mc, int k);
int MPIDI_IBMC_mcast_probe_group(struct MPIDI_IBMC_state *st, MPIDI_IBMC_mcast_t * mc,
                                 MPIDI_IBMC_mcast_chan_t * c, int *routed);

/* ibmc_mcast_setup.c (L5.3) */
/* collective over comm; ops: the engine's operations (MPIDI_IBMC_mcast_ops,
 * from above), used when the process's multicast side is made */
int MPIDI_IBMC_mcast_chan_setup(struct MPIDI_IBMC_state *st, MPIR_Comm * comm,
                                const ibmc_mcast_ops_t * ops, MPIDI_IBMC_mcast_chan_t ** out);
void MPIDI_IBMC_mcast_chan_release(struct MPIDI_IBMC_state *st, MPIDI_IBMC_mcast_t * mc,
                                   MPIDI_IBMC_mcast_chan_t * c);

/* ibmc_mcast_place.c (L5.3): a persistent broadcast's in-place receiver */
typedef struct MPIDI_IBMC_mcast_place MPIDI_IBMC_mcast_place_t;
/* for len bytes at buf (at least 1): its buffer registered, its QP and
 * receives made; -1 with why (*out NULL) when it cannot be */
int MPIDI_IBMC_mcast_place_new(struct MPIDI_IBMC_state *st, void *buf, uint64_t len,
                               MPIDI_IBMC_mcast_place_t ** out, char *why, size_t whylen);
void MPIDI_IBMC_mcast_place_free(struct MPIDI_IBMC_state *st, MPIDI_IBMC_mcast_place_t * p);
/* MPI_Finalize: every receiver's verbs resources go; the structures stay
 * to their owners */
void MPIDI_IBMC_mcast_place_release_all(MPIDI_IBMC_mcast_t * mc);
/* the engine's place_arm and place_disarm (ibmc_mcast_engine.h) */
int MPIDI_IBMC_mcast_place_arm(struct MPIDI_IBMC_state *st, MPIDI_IBMC_mcast_chan_t * c,
                               MPIDI_IBMC_mcast_place_t * p, void *buf, uint64_t len,
                               uint32_t nfrags, int *armed);
int MPIDI_IBMC_mcast_place_disarm(struct MPIDI_IBMC_state *st, MPIDI_IBMC_mcast_place_t * p);
/* the armed receivers' completions to the engine; *found: how many */
int MPIDI_IBMC_mcast_place_poll(struct MPIDI_IBMC_state *st, MPIDI_IBMC_mcast_t * mc, int *found);
/* The sender's GID from the 40 bytes in front of a UD payload: a GRH
 * (InfiniBand, RoCE v1) or, for RoCE v2 over IPv4, 20 unused bytes and
 * the IPv4 header, whose source address maps to a GID.  -1: neither. */
int MPIDI_IBMC_mcast_grh_source(const char *b, union ibv_gid *gid);

/* ibmc_mcast_recv.c (L5.4): MPIDI_IBMC_mcast_poll, MPIDI_IBMC_mcast_recv_rc,
 * MPIDI_IBMC_mcast_serve_retiring (ibmc_mcast.h) */

/* ibmc_mcast_io.c (L5.4) */
extern const ibmc_mcast_ops_t MPIDI_IBMC_mcast_ops;

/* ibmc_mcast_bcast.c (L5.5): MPIDI_IBMC_mcast_check_cvars,
 * MPIDI_IBMC_mcast_comm_free (ibmc_mcast.h), MPIDI_IBMC_mcast_bcast
 * (../ibmc_coll.h) */

/* ibmc_mcast_finalize.c (L5.5): MPIDI_IBMC_mcast_finalize,
 * MPIDI_IBMC_mcast_free (ibmc_mcast.h) */

#endif /* IBMC_MCAST_IMPL_H_INCLUDED */
