/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L5 (protocols), inside the node segments: their layout and the
 * calls between ibmc_nodeseg.c and ibmc_node_allgather.c; what the drivers
 * call is in ibmc_nodeseg.h.
 *
 * Node-shared registered segments (seed 001 §4): one shared-memory segment
 * per node of a communicator, which every process of the node maps and
 * registers with the HCA, and into which the node leaders of other nodes
 * RDMA-write.  ibmc_nodeseg.c creates and frees them; ibmc_node_allgather.c
 * runs MPI_Allgather over them with the plan of ibmc_noderd.h.
 *
 * A segment is
 *
 *   [ half 0 | half 1 | arrival flags (one line per round) |
 *     flag sources and the probe slot (the leader's) |
 *     the multicast line (the leader's progress in a call by multicast) |
 *     one line per local process: its copy-in mark, pid and world rank ]
 *
 * Calls alternate halves, which is what lets a node write into its partner
 * for the next call while the partner's processes still copy out of the
 * other half (see ibmc_node_allgather.c).  The data halves come first so
 * that the flags are at the same offset on every node whatever its number
 * of processes. */

#ifndef IBMC_NODESEG_IMPL_H_INCLUDED
#define IBMC_NODESEG_IMPL_H_INCLUDED

#include <stdint.h>
#include "ibmc_noderd.h"
#include "ibmc_nodeseg.h"
#include "ibmc_wr.h"

#define IBMC_NODESEG_LINE 64    /* flags and marks each get a cache line */

/* Another node's segment, as its leader registered it.  A work request's id
 * points to wr (IBMC_WR_NODESEG), so the completion finds its connection. */
typedef struct MPIDI_IBMC_nodeseg_target {
    MPIDI_IBMC_wr_ctx_t wr;
    struct MPIDI_IBMC_nodeseg *seg;
    int world;                  /* the leader's rank in MPI_COMM_WORLD */
    uint32_t rkey, probe_rkey;
    uint64_t addr;
    uint64_t probe_addr;        /* the leader's MPIDI_IBMC_state_t.probe_word */
} MPIDI_IBMC_nodeseg_target_t;

typedef struct MPIDI_IBMC_nodeseg {
    struct MPIDI_IBMC_nodeseg *next, *prev;     /* every live one, for MPI_Finalize */
    MPIR_Comm *comm;
    int ready;                  /* 0: every member falls back; why says why */
    char why[160];
    int told;                   /* why was printed (MPIR_CVAR_IBMC_STATS) */

    int size, rank;
    int nnodes, my_node;
    int local_n, my_local;      /* processes on this node, and this one's index */
    int *local_ranks;           /* their communicator ranks, ascending: [0] leads */
    ibmc_noderd_layout_t lay;
    int nrounds;
    ibmc_noderd_round_t rounds[IBMC_NODERD_MAX_ROUNDS];
    MPIDI_IBMC_nodeseg_target_t *targets;       /* by node; the leader's view */

    char *base;                 /* this process's mapping */
    size_t cap;                 /* MPIR_CVAR_IBMC_NODE_SEG_SIZE when it was made */
    size_t half;                /* bytes of one data half */
    size_t map_size;
    struct ibv_mr *mr;          /* this process's registration of the whole segment */
    uint64_t seq;               /* calls so far: the value flags and marks take */

    /* Moving blocks by multicast (MPIR_CVAR_IBMC_NODE_RD_MCAST_MIN): every
     * member knows whether it may (mcast_ok: the leaders form a
     * communicator whose rank j leads node j, `leaders`, which only the
     * leaders hold), and stops when the channel declined it (every leader
     * learns that alike and tells its node through the multicast line). */
    int mcast_ok, mcast_declined;
    MPIR_Comm *leaders;

    /* Rounds of at least share_min bytes (MPIR_CVAR_IBMC_NODE_RD_SHARE_MIN,
     * 0: none) are written by up to IBMC_NODESEG_SHARERS processes of the
     * node, each a share from its own registration of the segment and then
     * its own slot of the round's flag line.  members: every member's
     * probe word, by communicator rank, to check on a sharer that is late. */
    size_t share_min;
    MPIDI_IBMC_nodeseg_target_t *members;
    int writes_inflight;        /* the leader's RDMA writes and probes not yet completed */
} MPIDI_IBMC_nodeseg_t;

/* The parts of a segment (see above). */
static inline volatile uint64_t *MPIDI_IBMC_nodeseg_flag(MPIDI_IBMC_nodeseg_t * s, int round)
{
    return (volatile uint64_t *) (s->base + 2 * s->half + (size_t) round * IBMC_NODESEG_LINE);
}

static inline uint64_t *MPIDI_IBMC_nodeseg_flag_src(MPIDI_IBMC_nodeseg_t * s, int round)
{
    return (uint64_t *) (s->base + 2 * s->half + IBMC_NODERD_MAX_ROUNDS * IBMC_NODESEG_LINE +
                         (size_t) round * sizeof(uint64_t));
}

/* Where an RDMA read that checks on a partner node lands (in this process's
 * own segment). */
static inline uint64_t *MPIDI_IBMC_nodeseg_probe_slot(MPIDI_IBMC_nodeseg_t * s)
{
    return MPIDI_IBMC_nodeseg_flag_src(s, IBMC_NODERD_MAX_ROUNDS);
}

/* The multicast line: [0] how many nodes' blocks the leader has in the
 * segment in this call (see ibmc_node_allgather.c), [1] 1 once the channel
 * declined. */
static inline volatile uint64_t *MPIDI_IBMC_nodeseg_mcast_line(MPIDI_IBMC_nodeseg_t * s)
{
    return (volatile uint64_t *) (s->base + 2 * s->half +
                                  2 * IBMC_NODERD_MAX_ROUNDS * IBMC_NODESEG_LINE);
}

/* A local process's line: [0] its mark, [1] its pid, [2] its world rank. */
static inline volatile uint64_t *MPIDI_IBMC_nodeseg_mark(MPIDI_IBMC_nodeseg_t * s, int local)
{
    return (volatile uint64_t *) (s->base + 2 * s->half +
                                  (2 * IBMC_NODERD_MAX_ROUNDS + 1) * IBMC_NODESEG_LINE +
                                  (size_t) local * IBMC_NODESEG_LINE);
}

static inline size_t MPIDI_IBMC_nodeseg_flag_offset(size_t half, int round)
{
    return 2 * half + (size_t) round * IBMC_NODESEG_LINE;
}

#define IBMC_NODESEG_SHARERS 8  /* flag slots of a round's line */

/* How many processes of `node` (its lowest local indices) write a round of
 * `bytes`: writer and receiver compute the same from the same plan. */
static inline int MPIDI_IBMC_nodeseg_sharers(MPIDI_IBMC_nodeseg_t * s, int node, size_t bytes)
{
    int n = s->lay.node_count[node];
    if (!s->share_min || bytes < s->share_min)
        return 1;
    return n < IBMC_NODESEG_SHARERS ? n : IBMC_NODESEG_SHARERS;
}

/* Set up the segments of `comm` for calls that move up to `bytes` per rank,
 * collectively: every member must call it, and every member ends with the
 * same `ready`.  A member that cannot map or register the segment makes
 * all fall back.  grown_from: the half of the segment this one replaces,
 * or 0.  Returns an MPI error only for failures that leave the
 * communicator unusable. */
int MPIDI_IBMC_nodeseg_setup(MPIDI_IBMC_state_t * st, MPIR_Comm * comm, size_t bytes,
                             size_t grown_from, MPIDI_IBMC_nodeseg_t ** out);

/* The bytes of a half for `bytes` per rank on `nranks` ranks: the need, at
 * least 64 KiB and four times grown_from (so that growing call by call
 * makes few segments), page-rounded, at most `cap`. */
size_t MPIDI_IBMC_nodeseg_half_for(size_t bytes, int nranks, size_t cap, size_t grown_from);

/* Unmap, deregister and forget.  With RDMA of its own still in flight
 * (a call that failed midway) it is only detached from its communicator,
 * and freed at MPI_Finalize, after the queue pairs. */
void MPIDI_IBMC_nodeseg_free(MPIDI_IBMC_state_t * st, MPIDI_IBMC_nodeseg_t * s);


#endif /* IBMC_NODESEG_IMPL_H_INCLUDED */
