/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L5, multicast glue: setup (L5.3).  Below: group (joins, the
 * routing probe), device (made on first use), the engine, the netmod's
 * lower layers and MPICH's stock collectives for the members' agreement.
 * Above: the receive path (L5.4) releases retired channels; bcast (L5.5)
 * sets channels up and releases them, handing down the engine's operations
 * of io (L5.4); finalize (L5.5) releases what is left.
 *
 * A communicator's channel (ibmc_mcast_impl.h): set up collectively on its
 * first multicast broadcast, or agreed unusable so that every member falls
 * back together; its ACK board; its release.  And the process's multicast
 * side, made by the first channel's setup. */

#include <mpidimpl.h>
#include "../ibmc_types.h"
#include "ibmc_mcast_impl.h"

/* the longest NAK timeout, probe and laggard-probe interval */
#define IBMC_MCAST_NAK_MAX_US 100000
/* Idle turns of a broadcast between clock reads, where the progress engine
 * does not yield.  Such a turn polls the queues and returns in about a
 * microsecond, so the NAK timer (200 us at first) and the root's question
 * act at most some 16 us late; a clock that is a system call (a guest on
 * HPET) is read 16 times less often.  Where a turn yields, it already
 * costs a system call and may last a scheduling slice, and the clock is
 * read every turn (params.clock_every): with MPIR_CVAR_IBMC_PROGRESS_YIELD
 * in force, and under MPI_THREAD_MULTIPLE, where each wait turn yields
 * MPICH's critical section to other threads. */
#define IBMC_MCAST_CLOCK_EVERY 16

/* The process's multicast side, made on first use: the engine under the
 * CVARs' settings, the group pool, the fault injector and the device.  ops
 * is the engine's operations on verbs (MPIDI_IBMC_mcast_ops, in io, a
 * layer above this one): the caller hands it down, as a UCX caller hands
 * its completion callback down in op->handler, so that this file names
 * nothing above it. */
static MPIDI_IBMC_mcast_t *mcast_get(MPIDI_IBMC_state_t * st, const ibmc_mcast_ops_t * ops)
{
    if (!st->mcast) {
        char why[160];
        MPIDI_IBMC_mcast_t *mc = MPL_calloc(1, sizeof(MPIDI_IBMC_mcast_t), MPL_MEM_OTHER);
        if (!mc)
            return NULL;
        ibmc_mcast_params_t params = {
            .window = (uint32_t) MPIR_CVAR_IBMC_MCAST_WINDOW,
            .ack_every = (uint32_t) MPIR_CVAR_IBMC_MCAST_ACK_EVERY,
            .subgroup = MPIR_CVAR_IBMC_MCAST_SUBGROUP,
            .nak_timeout_us = (uint32_t) MPIR_CVAR_IBMC_MCAST_NAK_TIMEOUT,
            .nak_max_us = IBMC_MCAST_NAK_MAX_US,
            .rdma_acks = MPIR_CVAR_IBMC_MCAST_RDMA_ACKS,
            .relay_on_loss = !MPIR_CVAR_IBMC_MCAST_COROOT_RELAY,
            .clock_every = st->yield || MPIR_ThreadInfo.isThreaded ? 1 : IBMC_MCAST_CLOCK_EVERY
        };
        ibmc_mcast_engine_init(&mc->eng, ops, st, &params, &MPIDI_IBMC_pvars.mcast, &mc->faults);
        st->mcast = mc;
        ibmc_mcast_pool_init(&mc->pool, MPIR_CVAR_IBMC_MCAST_GROUPS);
        /* MPI_Init checked the CVAR (MPIDI_IBMC_mcast_check_cvars) */
        ibmc_mcast_faults_parse(MPIR_CVAR_IBMC_MCAST_FAULTS, &mc->fault_spec, why, sizeof(why));
        ibmc_mcast_faults_init(&mc->faults, &mc->fault_spec, (uint64_t) st->my_rank + 1);
        MPIDI_IBMC_mcast_device_init(st, mc);
    }
    return st->mcast;
}

/* A channel leaves pool entry e; the last one detaches the QP from the
 * group, which stays joined. */
static void group_unref(MPIDI_IBMC_mcast_t * mc, int e)
{
    ibmc_mcast_pool_unref(&mc->pool, e);
    if (!mc->pool.e[e].refs)
        MPIDI_IBMC_mcast_group_detach(mc, e);
}

static void chan_free_memory(MPIDI_IBMC_mcast_chan_t * c)
{
    /* the board stays registered for the next channel (MPIDI_IBMC_mcast_boardmem_t) */
    if (c->board_mem)
        c->board_mem->in_use = 0;
    if (c->ring_mr)
        ibv_dereg_mr(c->ring_mr);
    if (c->ch.eng)
        ibmc_mcast_chan_free(&c->ch);
    MPL_free(c->peer_board);
    MPL_free(c->peer_rkey);
    MPL_free(c->world);
    MPL_free(c->qpn);
    MPL_free(c);
}

/* Give the group back to the pool and free everything; unlinks the channel
 * from the process's list. */
void MPIDI_IBMC_mcast_chan_release(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc,
                                   MPIDI_IBMC_mcast_chan_t * mch)
{
    const ibmc_mcast_chan_t *c = &mch->ch;
    /* a channel that was set up, up to its probe at least */
    if (MPIR_CVAR_IBMC_STATS && ibmc_mcast_chan_accepts(c)) {
        const uint64_t *n = c->rx.count;
        printf("ibmc-stats: rank %d mcast context %#x epoch %u size %d: rx delivered %llu held "
               "%llu duplicate %llu malformed %llu foreign %llu stale %llu out_of_window %llu "
               "wrong_source %llu mismatch %llu; tx packets %llu acks %llu old_acks %llu "
               "retransmits %llu early_naks %llu stale_naks %llu bogus_naks %llu; co-root "
               "subgroup %d kept %llu served %llu misses %llu waits %llu leaf_acks %llu\n",
               st->my_rank, c->context_id, c->epoch, c->size,
               (unsigned long long) n[IBMC_MCAST_RX_DELIVERED],
               (unsigned long long) n[IBMC_MCAST_RX_HELD],
               (unsigned long long) n[IBMC_MCAST_RX_DUPLICATE],
               (unsigned long long) n[IBMC_MCAST_RX_MALFORMED],
               (unsigned long long) n[IBMC_MCAST_RX_FOREIGN],
               (unsigned long long) n[IBMC_MCAST_RX_STALE_EPOCH],
               (unsigned long long) n[IBMC_MCAST_RX_OUT_OF_WINDOW],
               (unsigned long long) n[IBMC_MCAST_RX_WRONG_SOURCE],
               (unsigned long long) n[IBMC_MCAST_RX_MISMATCH],
               (unsigned long long) c->tx.packets, (unsigned long long) c->tx.acks,
               (unsigned long long) c->tx.old_acks, (unsigned long long) c->tx.retransmits,
               (unsigned long long) c->tx.early_naks, (unsigned long long) c->tx.stale_naks,
               (unsigned long long) c->tx.bogus_naks, c->subgroup,
               (unsigned long long) c->relay.kept, (unsigned long long) c->relay.served,
               (unsigned long long) c->relay.misses, (unsigned long long) c->relay.waits,
               (unsigned long long) c->relay.leaf_acks);
        fflush(stdout);
    }
    for (MPIDI_IBMC_mcast_chan_t ** p = &mc->chans; *p; p = &(*p)->next)
        if (*p == mch) {
            *p = mch->next;
            break;
        }
    /* the group stays joined for the next communicator (ibmc_mcast_pool.h) */
    if (mch->group >= 0)
        group_unref(mc, mch->group);
    chan_free_memory(mch);
}

/* A board for c's ACKs, arrivals and partial results
 * (MPIDI_IBMC_mcast_boardmem_t): a free one of a channel of the same size,
 * or a new one.  Only the same size: the board's parts start at offsets
 * that depend on it, and a late ACK write of the channel that used the
 * board before must land in the ACK part, where its epoch marks it
 * foreign, never in another channel's arrival counts or partial results.
 * Without one (no memory, or the registration failed) the channel still
 * works: members send their ACKs and reports to this process as RC
 * messages. */
static void board_get(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc,
                      MPIDI_IBMC_mcast_chan_t * c)
{
    MPIDI_IBMC_mcast_boardmem_t *b;
    for (b = mc->boards; b; b = b->next)
        if (!b->in_use && (size_t) b->cap == IBMC_MCAST_BOARD_WORDS(c->ch.size))
            break;
    if (!b) {
        b = MPL_calloc(1, sizeof(*b), MPL_MEM_OTHER);
        if (!b)
            return;
        b->cap = (int) IBMC_MCAST_BOARD_WORDS(c->ch.size);
        b->words = MPL_aligned_alloc(64, (size_t) b->cap * sizeof(uint64_t), MPL_MEM_BUFFER);
        if (b->words) {
            memset(b->words, 0, (size_t) b->cap * sizeof(uint64_t));
            b->mr = ibv_reg_mr(st->hca.pd, b->words, (size_t) b->cap * sizeof(uint64_t),
                               IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
        }
        if (!b->mr) {
            MPL_free(b->words);
            MPL_free(b);
            return;
        }
        b->next = mc->boards;
        mc->boards = b;
        MPIDI_IBMC_pvars.mcast.boards++;
    }
    b->in_use = 1;
    c->board_mem = b;
}

/* qsort's ascending order of ints */
static int cmp_int(const void *a, const void *b)
{
    return (*(const int *) a > *(const int *) b) - (*(const int *) a < *(const int *) b);
}

/* The verbs side's own arrays; the engine's come from ibmc_mcast_chan_init. */
static int chan_alloc(MPIDI_IBMC_mcast_t * mc, MPIDI_IBMC_mcast_chan_t * c, MPIR_Comm * comm)
{
    int n = comm->local_size;
    c->world = MPL_calloc(n, sizeof(int), MPL_MEM_OTHER);
    c->qpn = MPL_calloc(n, sizeof(uint32_t), MPL_MEM_OTHER);
    c->peer_board = MPL_calloc(n, sizeof(uint64_t), MPL_MEM_OTHER);
    c->peer_rkey = MPL_calloc(n, sizeof(uint32_t), MPL_MEM_OTHER);
    if (!c->world || !c->qpn || !c->peer_board || !c->peer_rkey ||
        ibmc_mcast_chan_init(&c->ch, &mc->eng, n, comm->rank, comm->context_id,
                             mc->payload_max))
        return -1;
    for (int r = 0; r < n; r++)
        c->world[r] = MPIDI_IBMC_AV(MPIDIU_comm_rank_to_av(comm, r)).world_rank;
    return 0;
}

/* What every member contributes to its channel's setup: whether it can, its
 * QP, its epoch counter, the groups it offers and its ACK board (address 0:
 * none). */
typedef struct {
    uint32_t ok, qpn, epoch_seq, board_rkey;
    uint32_t conflict;          /* the group picked as its own carries another channel
                                 * here (set up at once by another thread) */
    uint32_t pad;
    ibmc_mcast_pool_offer_t groups;
    uint64_t board;
} setup_info_t;

/* Set-ups of one process that run at once (threads under
 * MPI_THREAD_MULTIPLE) offer the same free groups of a leader they share,
 * and may both pick one as their own.  A member that finds its pick
 * already busy says so; all then pick again from fresh offers, up to this
 * many times, and then share it. */
#define SETUP_PICKS 4

/* The group of c, a communicator of n members whose lowest world rank is
 * leader, picked alike at every member from their offers in all
 * (ibmc_mcast_pool.h) and joined here.  c->group is its pool entry, or -1
 * with c->why: the pool had none (c->group_none, the same at every member),
 * or this member's join failed.  *conflict: the pick was to be c's own, and
 * another channel of this process uses it; *shared: the pick shares a
 * group by design (the pool had none of c's own). */
static int take_group(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc,
                      MPIDI_IBMC_mcast_chan_t * c, const setup_info_t * all,
                      ibmc_mcast_pool_offer_t * offers, int n, uint32_t leader, int *conflict,
                      int *shared)
{
    *conflict = 0;
    *shared = 0;
    ibmc_mcast_pool_kind_t kind;
    int full, leave = 0;
    for (int r = 0; r < n; r++)
        offers[r] = all[r].groups;
    int k = ibmc_mcast_pool_pick(offers, n, &kind, &full);
    if (k < 0) {
        full = MPL_MAX(full, 0);
        c->group_none = 1;
        snprintf(c->why, sizeof(c->why), "no multicast group is free for this communicator: "
                 "rank %d uses all MPIR_CVAR_IBMC_MCAST_GROUPS (%u) of its groups for other "
                 "communicators", full, all[full].groups.cap);
        return MPI_SUCCESS;
    }
    uint32_t addr = ibmc_mcast_pool_addr(leader, k);
    int e = ibmc_mcast_pool_place(&mc->pool, addr, &leave);
    if (e < 0) {
        /* the offer said otherwise: a member that cannot keep its word
         * fails the second round, and every member falls back */
        snprintf(c->why, sizeof(c->why), "no pool entry for the agreed multicast group");
        return MPI_SUCCESS;
    }
    if (leave) {
        MPIDI_IBMC_mcast_group_leave(mc, e);
        ibmc_mcast_pool_left(&mc->pool, e);
        MPIDI_IBMC_pvars.mcast.group_swaps++;
    }
    /* taken before the join, whose wait lets other threads set their
     * channels up: they find the entry busy, or holding this group */
    ibmc_mcast_pool_joined(&mc->pool, e, addr);
    ibmc_mcast_pool_ref(&mc->pool, e);
    /* judged before the join lets another set-up take it too */
    *shared = kind == IBMC_MCAST_POOL_SHARED;
    *conflict = !*shared && mc->pool.e[e].refs > 1;
    if (MPIDI_IBMC_mcast_group_join(st, mc, e, addr, c->why, sizeof(c->why)) != 0) {
        /* the join left the group */
        *conflict = 0;
        ibmc_mcast_pool_unref(&mc->pool, e);
        if (!mc->pool.e[e].refs)
            ibmc_mcast_pool_left(&mc->pool, e);
        return MPI_SUCCESS;
    }
    c->group = e;
    return MPI_SUCCESS;
}

/* Collective: set the channel of comm up, or agree that it cannot be. */
int MPIDI_IBMC_mcast_chan_setup(MPIDI_IBMC_state_t * st, MPIR_Comm * comm,
                                const ibmc_mcast_ops_t * ops, MPIDI_IBMC_mcast_chan_t ** out)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    int *nodes = NULL;
    setup_info_t mine = { 0 }, *all = NULL;
    ibmc_mcast_pool_offer_t *offers = NULL;
    int routed = 0;
    MPIDI_IBMC_mcast_t *mc = mcast_get(st, ops);
    MPIR_ERR_CHKANDJUMP(!mc, mpi_errno, MPI_ERR_OTHER, "**nomem");
    /* zeroed, the engine's channel is NEW: it takes nothing, and every
     * member falls back, until it is set up below */
    MPIDI_IBMC_mcast_chan_t *c = MPL_calloc(1, sizeof(*c), MPL_MEM_OTHER);
    MPIR_ERR_CHKANDJUMP(!c, mpi_errno, MPI_ERR_OTHER, "**nomem");
    c->next = mc->chans;
    mc->chans = c;
    c->group = -1;
    comm->dev.ch4.netmod.ibmc.coll = c;
    *out = c;

    /* One receiver per node: a communicator inside one node has no use for
     * the channel, and one whose members share nodes without a hierarchy
     * would put several receivers on a node.  Every member sees the same
     * node map, so this needs no agreement. */
    nodes = MPL_malloc(sizeof(int) * comm->local_size, MPL_MEM_OTHER);
    MPIR_ERR_CHKANDJUMP(!nodes, mpi_errno, MPI_ERR_OTHER, "**nomem");
    for (int r = 0; r < comm->local_size; r++)
        nodes[r] = MPIR_Process.node_map[MPIDI_IBMC_AV(MPIDIU_comm_rank_to_av(comm, r)).world_rank];
    qsort(nodes, comm->local_size, sizeof(int), cmp_int);
    /* the communicator's lowest world rank, which tells disjoint
     * communicators apart where their context ids do not */
    uint32_t leader = UINT32_MAX;
    for (int r = 0; r < comm->local_size; r++)
        leader = MPL_MIN(leader, (uint32_t) MPIDI_IBMC_AV(MPIDIU_comm_rank_to_av(comm, r)).world_rank);
    int one_node = nodes[0] == nodes[comm->local_size - 1], shared = 0;
    for (int r = 1; r < comm->local_size; r++)
        shared |= nodes[r] == nodes[r - 1];
    /* a channel that falls back is FAILED, not left NEW: it will never take
     * a packet, so one of its identity is a sibling's (ibmc_mcast_recv.c) */
    if (one_node || shared) {
        ibmc_mcast_chan_fail(&c->ch);
        c->single_node = one_node;
        snprintf(c->why, sizeof(c->why), "%s", one_node ? "all members are on one node" :
                 "members share a node and the communicator has no node hierarchy");
        goto fn_exit;
    }

    if (mc->state != 1) {
        snprintf(c->why, sizeof(c->why), "%s", mc->why);
    } else if (chan_alloc(mc, c, comm)) {
        snprintf(c->why, sizeof(c->why), "out of memory for the multicast window");
    } else {
        mine.ok = 1;
        mine.qpn = mc->qp->qp_num;
        if (MPIR_CVAR_IBMC_MCAST_RDMA_ACKS)
            board_get(st, mc, c);
        if (c->board_mem) {
            mine.board = (uintptr_t) c->board_mem->words;
            mine.board_rkey = c->board_mem->mr->rkey;
        }
    }
    mine.epoch_seq = mc->epoch_seq;
    if (mc->state == 1)
        ibmc_mcast_pool_offer(&mc->pool, leader, &mine.groups);
    all = MPL_malloc(sizeof(mine) * comm->local_size, MPL_MEM_OTHER);
    offers = MPL_malloc(sizeof(*offers) * comm->local_size, MPL_MEM_OTHER);
    MPIR_ERR_CHKANDJUMP(!all || !offers, mpi_errno, MPI_ERR_OTHER, "**nomem");

    /* first round: the epoch (every member's counter is past any epoch it has
     * used, so the largest one is new to all of them) and who can join.
     * These exchanges name a stock algorithm: the application's choice of
     * allgather algorithm (ibmc_node_rd) is not for them. */
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    mpi_errno = MPIR_Allgather_intra_brucks(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine),
                                            MPI_BYTE, comm, &errflag);
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    MPIR_ERR_CHECK(mpi_errno);
    uint32_t epoch = 0;
    int can = 1, who = -1;
    for (int r = 0; r < comm->local_size; r++) {
        epoch = MPL_MAX(epoch, all[r].epoch_seq);
        if (!all[r].ok && can) {
            can = 0;
            who = r;
        }
    }
    mc->epoch_seq = epoch + 1;
    /* the board is cleared before any member learns where it is (the second
     * round) */
    if (mine.ok)
        ibmc_mcast_chan_open(&c->ch, st->job_key, epoch,
                             c->board_mem ? c->board_mem->words : NULL);
    if (!can && mine.ok)
        snprintf(c->why, sizeof(c->why), "rank %d cannot use multicast", who);
    int group_shared = 0;
    for (int pick = 1; can; pick++) {
        int conflict, conflicts = 0;
        mpi_errno = take_group(st, mc, c, all, offers, comm->local_size, leader, &conflict,
                               &group_shared);
        MPIR_ERR_CHECK(mpi_errno);
        /* every member reached the same verdict when the pool had none */
        if (c->group < 0 && c->group_none) {
            can = 0;
            break;
        }
        mine.ok = c->group >= 0;
        mine.conflict = (uint32_t) conflict;

        /* second round: who joined, and who found its pick busy */
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
        mpi_errno = MPIR_Allgather_intra_brucks(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine),
                                                MPI_BYTE, comm, &errflag);
        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
        MPIR_ERR_CHECK(mpi_errno);
        for (int r = 0; r < comm->local_size && can; r++) {
            if (!all[r].ok) {
                can = 0;
                if (mine.ok)
                    snprintf(c->why, sizeof(c->why), "rank %d could not join the group", r);
            }
            conflicts += all[r].conflict != 0;
            c->qpn[r] = all[r].qpn;
            c->peer_board[r] = all[r].board;
            c->peer_rkey[r] = all[r].board_rkey;
        }
        /* out of picks, a member that found its pick busy shares it */
        group_shared |= conflict && pick == SETUP_PICKS;
        if (!can || !conflicts || pick == SETUP_PICKS)
            break;
        /* pick again, from what every member holds now */
        group_unref(mc, c->group);
        c->group = -1;
        ibmc_mcast_pool_offer(&mc->pool, leader, &mine.groups);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
        mpi_errno = MPIR_Allgather_intra_brucks(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine),
                                                MPI_BYTE, comm, &errflag);
        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
        MPIR_ERR_CHECK(mpi_errno);
    }
    /* counted by the pick, not by the entry's channels now: another
     * set-up's pick that conflicted here may not have left it yet */
    if (can && c->group >= 0)
        MPIDI_IBMC_pvars.mcast.groups_shared += group_shared;
    if (!can) {
        ibmc_mcast_chan_fail(&c->ch);
        goto fn_exit;
    }

    c->ring_mr = ibv_reg_mr(st->hca.pd, c->ch.ring, c->ch.ring_bytes, IBV_ACCESS_LOCAL_WRITE);
    if (!c->ring_mr) {
        /* the others have joined: an error, not a silent fallback on one rank */
        mpi_errno = MPIDI_IBMC_VERBS_ERROR("ibv_reg_mr(multicast ring)", errno);
        goto fn_fail;
    }

    /* third round: did the probe reach everyone.  The QP takes the group's
     * packets only now that every member has agreed on it: one picked
     * again (a conflict above) would have taken another channel's. */
    char attach_why[sizeof(c->why)] = "";
    int attached = !MPIDI_IBMC_mcast_group_attach(mc, c->group, attach_why, sizeof(attach_why));
    ibmc_mcast_chan_set_probing(&c->ch);
    if (attached) {
        mpi_errno = MPIDI_IBMC_mcast_probe_group(st, mc, c, &routed);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mine.ok = (uint32_t) routed;
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    mpi_errno = MPIR_Allgather_intra_brucks(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine),
                                            MPI_BYTE, comm, &errflag);
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    MPIR_ERR_CHECK(mpi_errno);
    /* name a member the probe missed; rank 0 alone failing means an
     * acknowledgement came too late */
    for (int r = 1; r < comm->local_size && !ibmc_mcast_chan_is_failed(&c->ch); r++) {
        if (!all[r].ok) {
            ibmc_mcast_chan_fail(&c->ch);
            snprintf(c->why, sizeof(c->why), "the group's probe did not reach rank %d within "
                     "%d s (MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT)", r,
                     MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT);
        }
    }
    if (!ibmc_mcast_chan_is_failed(&c->ch) && !all[0].ok) {
        ibmc_mcast_chan_fail(&c->ch);
        snprintf(c->why, sizeof(c->why), "rank 0 did not hear from every member within %d s "
                 "(MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT)", MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT);
    }
    if (!attached)
        snprintf(c->why, sizeof(c->why), "%s", attach_why);    /* this member's own reason */
    if (ibmc_mcast_chan_is_failed(&c->ch))
        goto fn_exit;
    ibmc_mcast_chan_set_ready(&c->ch);
    /* no root sends before every member takes packets (a stock barrier:
     * ibmc_mcast's would ride on this very channel) */
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    mpi_errno = MPIR_Barrier_intra_dissemination(comm, &errflag);
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    MPL_free(nodes);
    MPL_free(all);
    MPL_free(offers);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
