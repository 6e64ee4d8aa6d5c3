/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* MPI_Allgather over node-shared registered segments (seed 001 §4), the
 * netmod half of MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=ibmc_node_rd.
 *
 * One call (or one piece of a call too large for the segment):
 *   0. every process copies its block into its node's segment, at the
 *      position the plan gives its rank, and marks its line;
 *   1. once every local process has marked, the node's leader runs the
 *      rounds of ibmc_noderd.h: per round, one RDMA write of the blocks it
 *      holds straight into the partner node's segment (two in the last round
 *      of a node count that is not a power of two), then an 8-byte RDMA
 *      write of the call's sequence number into the partner's flag for that
 *      round; every local process polls the flag.  A round of at least
 *      MPIR_CVAR_IBMC_NODE_RD_SHARE_MIN bytes is written by up to 8
 *      processes of the node instead, each a part of it and then its own
 *      slot of the flag line.  That a flag's write is placed in memory
 *      after the data's rests on the HCA executing an RC queue pair's RDMA
 *      writes in order without relaxed ordering (none is asked for here),
 *      which mlx5 and rxe do and seed 001 relies on too; the InfiniBand
 *      specification promises the order of execution, not of placement;
 *   2. every process copies blocks out to its receive buffer as their round
 *      completes, while the leader's next round is on the wire (seed 001 §4,
 *      "overlap"; MPIR_CVAR_IBMC_NODE_RD_OVERLAP=false copies at the end).
 *
 * Flags and marks take the sequence number of the call and are compared
 * with >=, so they never need resetting.  Calls alternate the segment's two
 * halves.  A node writes into its partner's half for call c+1 only after it
 * received the partner's data of call c, which the partner's leader sent
 * only after every process of the partner's node had entered call c, so had
 * finished copying out of that half in call c-1: nothing is overwritten
 * while it is read.  The same holds inside a node, where a process enters
 * call c+2 only after every local process has marked call c+1. */

#include <mpidimpl.h>
#include <signal.h>
#include "ibmc_types.h"
#include "ibmc_util.h"
#include "ibmc_nodeseg_impl.h"
#include "ibmc_coll.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_IBMC_NODE_RD_OVERLAP
      category    : CH4_IBMC
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        In the ibmc_node_rd allgather, each process copies the blocks that a
        round brought into its node's segment out to its receive buffer
        while the next round is on the network.  false copies everything
        after the last round, to measure what the overlap gains.

    - name        : MPIR_CVAR_IBMC_NODE_RD_SHARE_MIN
      category    : CH4_IBMC
      type        : int
      default     : 8192
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Bytes of one round of the ibmc_node_rd allgather (the blocks one node
        writes into another in one step) from which every process of the
        node, up to 8, writes a part of them from its own registration of
        the segment, instead of the node's leader writing all of it (seed
        001's design).  0: the leader always writes alone.  The default
        comes from Soft-RoCE measurements (doc/design.md, commit 6541eb4), where
        shared rounds of 8 KiB and more took 0.39-0.64 of the leader's time
        and smaller ones lost or drew; on an HCA that copies by DMA, measure
        with bench/experiments/node-rd-shared.sh.  All processes must
        agree.

    - name        : MPIR_CVAR_IBMC_NODE_RD_MCAST_MIN
      category    : CH4_IBMC
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Bytes per rank from which the ibmc_node_rd allgather moves blocks
        between nodes by hardware multicast instead of recursive doubling:
        each node's leader broadcasts its node's blocks once over the
        communicator's multicast channel (the one MPIR_CVAR_IBMC_MCAST
        controls, with its loss recovery), straight into every other node's
        segment (concurrent broadcasting, seed 003 section 4.3.3).  That
        sends each node's data once, where recursive doubling sends it
        log2(nodes) times, at the price of nodes-1 broadcasts received one
        after the other.  0, the default, never does; doc/design.md
        gives the measurements behind that default.  When the channel cannot
        serve the communicator, the calls go back to recursive doubling.
        All processes must agree.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

#define NODESEG(comm) ((MPIDI_IBMC_nodeseg_t *) (comm)->dev.ch4.netmod.ibmc.nodeseg)

/* Counters bumped outside the netmod's lock: under MPI_THREAD_MULTIPLE
 * several threads may run collectives on different communicators. */
#define COUNT(field, n) __atomic_fetch_add(&MPIDI_IBMC_pvars.field, (n), __ATOMIC_RELAXED)

/* One side of the call: a user buffer and how to reach a rank's block. */
typedef struct {
    char *buf;
    MPI_Aint count;
    MPI_Datatype type;
    MPI_Aint stride;            /* bytes between ranks' blocks (receive side) */
    MPI_Aint lb;                /* true lower bound, for direct copies */
    int contig;
} side_t;

static void side_init(side_t * sd, const void *buf, MPI_Aint count, MPI_Datatype type)
{
    MPI_Aint extent, true_extent;
    sd->buf = (char *) buf;
    sd->count = count;
    sd->type = type;
    MPIR_Datatype_get_extent_macro(type, extent);
    sd->stride = extent * count;
    MPIR_Datatype_is_contig(type, &sd->contig);
    MPIR_Type_get_true_extent_impl(type, &sd->lb, &true_extent);
}

/* A call that asked for the segments runs a stock algorithm instead:
 * counted every time, printed with MPIR_CVAR_IBMC_STATS the first time for
 * this reason (*told). */
static void fallback_note(MPIR_Comm * comm, const char *why, int *told)
{
    COUNT(node_rd_fallbacks, 1);
    if (MPIR_CVAR_IBMC_STATS && comm->rank == 0 && !(told && *told)) {
        MPIDI_IBMC_state_t *st = MPIDI_IBMC_STATE();
        printf("ibmc-stats: rank %d ibmc_node_rd falls back to a stock allgather on "
               "communicator %#x (size %d): %s\n", st ? st->my_rank : -1,
               (unsigned) comm->context_id, comm->local_size, why);
        fflush(stdout);
        if (told)
            *told = 1;
    }
}

/* Whether a process of this node has ended (a zombie has too). */
static int local_gone(MPIDI_IBMC_nodeseg_t * s, int local)
{
    pid_t pid = (pid_t) MPIDI_IBMC_nodeseg_mark(s, local)[1];
    if (pid <= 0)
        return 0;
    if (kill(pid, 0) == 0 || errno != ESRCH) {
        char path[64], buf[256];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        FILE *f = fopen(path, "r");
        if (!f)
            return 0;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *paren = strrchr(buf, ')');
        return paren && (paren[2] == 'Z' || paren[2] == 'X');
    }
    return 1;
}

/* An RDMA read of a word the writer (the partner's leader, or a process
 * sharing its writes) keeps registered until its MPI_Finalize: it fails,
 * naming the writer, if the writer is gone, where waiting for its flag
 * would wait forever.  (Not of its segment, which it may free as soon as
 * this process's flag wait is over.) */
static int probe_partner(MPIDI_IBMC_state_t * st, MPIDI_IBMC_nodeseg_t * s,
                         MPIDI_IBMC_nodeseg_target_t * t)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_IBMC_conn_t *conn = &st->conns[t->world];
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    if (conn->sq_inflight < st->sq_depth) {
        struct ibv_sge sge = {
            .addr = (uintptr_t) MPIDI_IBMC_nodeseg_probe_slot(s),
            .length = sizeof(uint64_t),
            .lkey = s->mr->lkey
        };
        struct ibv_send_wr wr, *bad;
        memset(&wr, 0, sizeof(wr));
        wr.wr_id = MPIDI_IBMC_wr_id_ctx(&t->wr, IBMC_WR_NODESEG);
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_READ;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.wr.rdma.remote_addr = t->probe_addr;
        wr.wr.rdma.rkey = t->probe_rkey;
        int rc = ibv_post_send(conn->qp, &wr, &bad);
        if (rc)
            MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**ibmc_verbs", "**ibmc_verbs %s %s",
                                 "ibv_post_send(RDMA READ probe of a partner node)", strerror(rc));
        conn->sq_inflight++;
        s->writes_inflight++;
    }
  fn_fail:
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    return mpi_errno;
}

/* Progress while waiting for memory that another process or the HCA writes
 * to reach seq.  A wait that lasts checks, once a second, on whoever it
 * waits for: the local process `local` by its pid, or the writer `writer`
 * on another node by an RDMA read; a process that died mid-call then ends
 * the call with an error naming it instead of a hang. */
static int wait_for(MPIDI_IBMC_state_t * st, MPIDI_IBMC_nodeseg_t * s, volatile uint64_t * p,
                    uint64_t seq, int local, MPIDI_IBMC_nodeseg_target_t * writer)
{
    int mpi_errno = MPI_SUCCESS;
    double check_at = 0;
    for (unsigned spins = 1; __atomic_load_n(p, __ATOMIC_ACQUIRE) < seq; spins++) {
        mpi_errno = MPIDI_IBMC_wait_turn_unlocked();
        MPIR_ERR_CHECK(mpi_errno);
        if (spins % 256)
            continue;
        double now = MPIDI_IBMC_now();
        if (!check_at) {
            check_at = now + 1.0;
        } else if (now >= check_at) {
            check_at = now + 1.0;
            /* the process may have marked and then ended normally */
            if (local >= 0 && local_gone(s, local) && __atomic_load_n(p, __ATOMIC_ACQUIRE) < seq)
                MPIR_ERR_SETANDJUMP1(mpi_errno, MPI_ERR_OTHER, "**ibmc_node_peer",
                                     "**ibmc_node_peer %d",
                                     (int) MPIDI_IBMC_nodeseg_mark(s, local)[2]);
            if (writer) {
                mpi_errno = probe_partner(st, s, writer);
                MPIR_ERR_CHECK(mpi_errno);
            }
        }
    }
  fn_fail:
    return mpi_errno;
}

/* Bytes a round's ranges hold. */
static size_t round_bytes(const ibmc_noderd_range_t * g, int n, size_t len)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += (size_t) g[i].count * len;
    return total;
}

/* This process's writes of round r into the partner's segment, then its
 * flag: all of the round's ranges from the leader, or, in a shared round
 * (MPIR_CVAR_IBMC_NODE_RD_SHARE_MIN), sharer k's k-th part of their bytes
 * into slot k of the flag line. */
static int post_round(MPIDI_IBMC_state_t * st, MPIDI_IBMC_nodeseg_t * s, int r, char *data,
                      size_t len, uint64_t seq)
{
    int mpi_errno = MPI_SUCCESS;
    const ibmc_noderd_round_t *rd = &s->rounds[r];
    MPIDI_IBMC_nodeseg_target_t *t = &s->targets[rd->to];
    MPIDI_IBMC_conn_t *conn = &st->conns[t->world];
    size_t half_off = (seq & 1) * s->half;
    struct ibv_sge sge[3];
    struct ibv_send_wr wr[3], *bad;
    /* this process's share of the round's bytes, in the order of its ranges */
    size_t total = round_bytes(rd->send, rd->nsend, len);
    int k = s->my_local, nk = MPIDI_IBMC_nodeseg_sharers(s, s->my_node, total);
    size_t from = total * (size_t) k / (size_t) nk, to = total * (size_t) (k + 1) / (size_t) nk;
    size_t piece_off[2], piece_len[2];
    int npieces = 0;
    size_t at = 0;
    for (int i = 0; i < rd->nsend; i++) {
        size_t off = (size_t) rd->send[i].first * len, n = (size_t) rd->send[i].count * len;
        size_t lo = MPL_MAX(from, at), hi = MPL_MIN(to, at + n);
        if (lo < hi) {
            piece_off[npieces] = off + (lo - at);
            piece_len[npieces++] = hi - lo;
        }
        at += n;
    }
    int n = npieces + 1;

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    while (conn->sq_inflight + n > st->sq_depth) {
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
        mpi_errno = MPIDI_IBMC_wait_turn_unlocked();
        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
        MPIR_ERR_CHECK(mpi_errno);
    }
    memset(wr, 0, sizeof(wr));
    for (int i = 0; i < n; i++) {
        if (i < npieces) {
            size_t off = piece_off[i];
            sge[i].addr = (uintptr_t) (data + off);
            sge[i].length = (uint32_t) piece_len[i];
            wr[i].wr.rdma.remote_addr = t->addr + half_off + off;
            MPIDI_IBMC_pvars.node_rd_writes++;
            MPIDI_IBMC_pvars.node_rd_write_bytes += sge[i].length;
        } else {
            uint64_t *src = MPIDI_IBMC_nodeseg_flag_src(s, r);
            *src = seq;
            sge[i].addr = (uintptr_t) src;
            sge[i].length = sizeof(uint64_t);
            wr[i].wr.rdma.remote_addr = t->addr + MPIDI_IBMC_nodeseg_flag_offset(s->half, r) +
                (size_t) k *sizeof(uint64_t);
            MPIDI_IBMC_pvars.node_rd_flag_writes++;
        }
        sge[i].lkey = s->mr->lkey;
        wr[i].wr_id = MPIDI_IBMC_wr_id_ctx(&t->wr, IBMC_WR_NODESEG);
        wr[i].sg_list = &sge[i];
        wr[i].num_sge = 1;
        wr[i].opcode = IBV_WR_RDMA_WRITE;
        wr[i].send_flags = IBV_SEND_SIGNALED;
        wr[i].wr.rdma.rkey = t->rkey;
        wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
    }
    int rc = ibv_post_send(conn->qp, wr, &bad);
    if (rc)
        MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**ibmc_verbs", "**ibmc_verbs %s %s",
                             "ibv_post_send(RDMA WRITE to a node segment)", strerror(rc));
    conn->sq_inflight += n;
    s->writes_inflight += n;
  fn_exit:
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int writes_done(MPIDI_IBMC_nodeseg_t * s)
{
    int mpi_errno = MPI_SUCCESS;
    for (;;) {
        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
        int left = s->writes_inflight;
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
        if (!left)
            break;
        mpi_errno = MPIDI_IBMC_wait_turn_unlocked();
        MPIR_ERR_CHECK(mpi_errno);
    }
  fn_fail:
    return mpi_errno;
}

/* Bytes [off, off + len) of this process's block into the segment. */
static int copy_in(char *dst, const side_t * sd, MPI_Aint off, size_t len)
{
    COUNT(node_rd_copies, 1);
    if (sd->contig) {
        memcpy(dst, sd->buf + sd->lb + off, len);
        return MPI_SUCCESS;
    }
    MPI_Aint done;
    int mpi_errno = MPIR_Typerep_pack(sd->buf, sd->count, sd->type, off, dst, (MPI_Aint) len,
                                      &done);
    if (mpi_errno == MPI_SUCCESS && done != (MPI_Aint) len)
        MPIR_ERR_SET2(mpi_errno, MPI_ERR_INTERN, "**ibmc_pack", "**ibmc_pack %d %d", (int) len,
                      (int) done);
    return mpi_errno;
}

/* One piece of a call: bytes [off, off + len) of every rank's block, in
 * the segment half `data`, flagged and marked with `seq`. */
typedef struct {
    uint64_t seq;
    char *data;
    MPI_Aint off;
    size_t len;
    int whole;                  /* the piece is the whole blocks */
    int skip;                   /* a rank whose block is in place already (MPI_IN_PLACE), or -1 */
    const side_t *rv;
} piece_t;

/* Blocks at positions [first, first + count) of the segment's piece out to
 * the receive buffer. */
static int copy_out(MPIDI_IBMC_nodeseg_t * s, const piece_t * pc, ibmc_noderd_range_t g)
{
    int mpi_errno = MPI_SUCCESS;
    const side_t *rv = pc->rv;
    size_t len = pc->len;
    int end = g.first + g.count;
    for (int pos = g.first; pos < end;) {
        int r = s->lay.pos_rank[pos];
        /* whole blocks of consecutive ranks are one copy into a contiguous buffer */
        int run = rv->contig && pc->whole ? ibmc_noderd_run(&s->lay, pos, end - pos) : 1;
        if (pc->skip >= r && pc->skip < r + run)
            run = pc->skip - r;
        if (run == 0) {
            pos++;
            continue;
        }
        const char *src = pc->data + (size_t) pos * len;
        if (rv->contig) {
            memcpy(rv->buf + rv->lb + (MPI_Aint) r * rv->stride + pc->off, src,
                   (size_t) run * len);
        } else {
            MPI_Aint done;
            mpi_errno = MPIR_Typerep_unpack(src, (MPI_Aint) len,
                                            rv->buf + (MPI_Aint) r * rv->stride, rv->count,
                                            rv->type, pc->off, &done);
            MPIR_ERR_CHECK(mpi_errno);
            if (done != (MPI_Aint) len)
                MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_INTERN, "**ibmc_pack", "**ibmc_pack %d %d",
                                     (int) len, (int) done);
        }
        COUNT(node_rd_copies, 1);
        pos += run;
    }
  fn_fail:
    return mpi_errno;
}

/* The rounds of recursive doubling (ibmc_noderd.h) of one piece. */
static int blocks_by_rdma(MPIDI_IBMC_state_t * st, MPIDI_IBMC_nodeseg_t * s, const piece_t * pc)
{
    int mpi_errno = MPI_SUCCESS;
    int leader = s->my_local == 0, overlap = MPIR_CVAR_IBMC_NODE_RD_OVERLAP;
    ibmc_noderd_range_t pending[1 + 2 * IBMC_NODERD_MAX_ROUNDS];
    int npending = 0;

    pending[npending].first = s->lay.node_first[s->my_node];
    pending[npending++].count = s->local_n;

    for (int r = 0; r < s->nrounds; r++) {
        const ibmc_noderd_round_t *rd = &s->rounds[r];
        if (rd->to >= 0 && s->my_local < MPIDI_IBMC_nodeseg_sharers(s, s->my_node,
                                                                    round_bytes(rd->send,
                                                                                rd->nsend,
                                                                                pc->len))) {
            mpi_errno = post_round(st, s, r, pc->data, pc->len, pc->seq);
            MPIR_ERR_CHECK(mpi_errno);
        }
        if (overlap) {
            for (int i = 0; i < npending; i++) {
                mpi_errno = copy_out(s, pc, pending[i]);
                MPIR_ERR_CHECK(mpi_errno);
            }
            npending = 0;
        }
        if (rd->from >= 0) {
            int nk = MPIDI_IBMC_nodeseg_sharers(s, rd->from,
                                                round_bytes(rd->recv, rd->nrecv, pc->len));
            for (int k = 0; k < nk; k++) {
                /* the leader checks on the writer, the others on the leader */
                MPIDI_IBMC_nodeseg_target_t *writer = !leader ? NULL : nk == 1 ?
                    &s->targets[rd->from] :
                    &s->members[s->lay.pos_rank[s->lay.node_first[rd->from] + k]];
                mpi_errno = wait_for(st, s, MPIDI_IBMC_nodeseg_flag(s, r) + k, pc->seq,
                                     leader ? -1 : 0, writer);
                MPIR_ERR_CHECK(mpi_errno);
            }
            for (int i = 0; i < rd->nrecv; i++)
                pending[npending++] = rd->recv[i];
        }
    }
    for (int i = 0; i < npending; i++) {
        mpi_errno = copy_out(s, pc, pending[i]);
        MPIR_ERR_CHECK(mpi_errno);
    }
    /* the source of this piece's writes is reused two pieces on, and a
     * failed write must be reported by the call that made it */
    mpi_errno = writes_done(s);
  fn_fail:
    return mpi_errno;
}

/* One piece by multicast (MPIR_CVAR_IBMC_NODE_RD_MCAST_MIN; seed 003
 * §4.3.3, concurrent broadcasting): the leaders broadcast node 0's blocks,
 * then node 1's, and so on, each from its own node's leader over the
 * leaders' multicast channel, which delivers them straight into the
 * segment's half at their place.  The leader counts the nodes done in the
 * multicast line, as call * (nodes + 1) + done, a value that only grows;
 * the node's processes copy each node's blocks out as it lands (or all at
 * the end without overlap).
 *
 * Reusing the half two calls on is safe for the same reason as with
 * RDMA writes: a leader takes part in the broadcasts of call c only once
 * every process of its node has entered call c, so finished copying out
 * of call c-2, and the channel writes into a receiver's buffer only while
 * that receiver's leader is inside the broadcast.
 *
 * Should the channel decline the leaders' communicator (its set-up failed:
 * every leader gets that same answer), this call moves the nodes' blocks
 * with MPICH's binomial broadcast among the leaders instead and the leader
 * tells its node, so that all members go back to recursive doubling from
 * the next call on. */
static int blocks_by_mcast(MPIDI_IBMC_state_t * st, MPIDI_IBMC_nodeseg_t * s, const piece_t * pc)
{
    int mpi_errno = MPI_SUCCESS;
    int leader = s->my_local == 0, overlap = MPIR_CVAR_IBMC_NODE_RD_OVERLAP;
    volatile uint64_t *line = MPIDI_IBMC_nodeseg_mcast_line(s);
    uint64_t base = pc->seq * (uint64_t) (s->nnodes + 1);
    int copied = 0;             /* nodes [0, copied) are in the receive buffer */

    for (int done = 0; done < s->nnodes;) {
        if (leader) {
            ibmc_noderd_range_t g = { s->lay.node_first[done], s->lay.node_count[done] };
            char *p = pc->data + (size_t) g.first * pc->len;
            MPI_Aint n = (MPI_Aint) ((size_t) g.count * pc->len);
            int used = 0;
            if (!s->mcast_declined) {
                mpi_errno = MPIDI_IBMC_mcast_bcast(p, n, done, s->leaders, &used);
                MPIR_ERR_CHECK(mpi_errno);
                s->mcast_declined = !used;
            }
            if (used) {
                COUNT(node_rd_mcast_bcasts, 1);
            } else {
                MPIR_Errflag_t errflag = MPIR_ERR_NONE;
                mpi_errno = MPIR_Bcast_intra_binomial(p, n, MPI_BYTE, done, s->leaders, &errflag);
                MPIR_ERR_CHECK(mpi_errno);
                MPIR_ERR_CHKANDJUMP(errflag, mpi_errno, MPI_ERR_OTHER, "**coll_fail");
            }
            done++;
            if (done == s->nnodes && s->mcast_declined)
                line[1] = 1;
            __atomic_store_n(&line[0], base + (uint64_t) done, __ATOMIC_RELEASE);
        } else {
            mpi_errno = wait_for(st, s, &line[0], base + (uint64_t) done + 1, 0, NULL);
            MPIR_ERR_CHECK(mpi_errno);
            done = (int) (__atomic_load_n(&line[0], __ATOMIC_ACQUIRE) - base);
        }
        if (overlap || done == s->nnodes) {
            for (; copied < done; copied++) {
                ibmc_noderd_range_t g = { s->lay.node_first[copied], s->lay.node_count[copied] };
                mpi_errno = copy_out(s, pc, g);
                MPIR_ERR_CHECK(mpi_errno);
            }
        }
    }
    if (!leader && line[1])
        s->mcast_declined = 1;
  fn_fail:
    return mpi_errno;
}

/* One piece: every process copies its block in and marks its line, waits
 * for every local process's mark, then the blocks cross the network. */
static int run_piece(MPIDI_IBMC_state_t * st, MPIDI_IBMC_nodeseg_t * s, const side_t * sd,
                     piece_t * pc, int by_mcast)
{
    pc->seq = ++s->seq;
    pc->data = s->base + (pc->seq & 1) * s->half;
    int mpi_errno = copy_in(pc->data + (size_t) s->lay.rank_pos[s->rank] * pc->len, sd, pc->off,
                            pc->len);
    MPIR_ERR_CHECK(mpi_errno);
    __atomic_store_n(MPIDI_IBMC_nodeseg_mark(s, s->my_local), pc->seq, __ATOMIC_RELEASE);
    for (int i = 0; i < s->local_n; i++) {
        mpi_errno = wait_for(st, s, MPIDI_IBMC_nodeseg_mark(s, i), pc->seq, i, NULL);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = by_mcast ? blocks_by_mcast(st, s, pc) : blocks_by_rdma(st, s, pc);
  fn_fail:
    return mpi_errno;
}

int MPIDI_IBMC_node_allgather(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                              MPIR_Comm * comm, int *used)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_IBMC_state_t *st = MPIDI_IBMC_STATE();
    size_t grown_from = 0;
    *used = 0;

    /* every test here gives every member the same answer */
    if (!MPIR_CVAR_IBMC_NODE_SEG) {
        fallback_note(comm, "MPIR_CVAR_IBMC_NODE_SEG is false", st ? &st->nodeseg_told_off : NULL);
        return MPI_SUCCESS;
    }
    if (!st || !st->conns ||
        MPL_atomic_load_int(&MPIR_Process.mpich_state) != MPICH_MPI_STATE__INITIALIZED) {
        fallback_note(comm, "MPI is not initialized yet", st ? &st->nodeseg_told_init : NULL);
        return MPI_SUCCESS;
    }
    if (comm->local_size < 2)
        return MPI_SUCCESS;     /* the stock algorithm copies; nothing to fall back from */
    MPI_Aint type_size;
    MPIR_Datatype_get_size_macro(recvtype, type_size);
    size_t bytes = (size_t) type_size * (size_t) recvcount;
    if (bytes == 0) {
        *used = 1;
        return MPI_SUCCESS;
    }

    MPIDI_IBMC_nodeseg_t *s = NODESEG(comm);
    if (s && s->ready && s->half < MPIDI_IBMC_nodeseg_half_for(bytes, s->size, s->cap, 0)) {
        /* grow: every member sees the same sizes and frees its segment */
        grown_from = s->half;
        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
        MPIDI_IBMC_nodeseg_free(st, s);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
        s = NULL;
    }
    if (!s) {
        mpi_errno = MPIDI_IBMC_nodeseg_setup(st, comm, bytes, grown_from, &s);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (!s->ready) {
        fallback_note(comm, s->why, &s->told);
        goto fn_exit;
    }

    /* pieces of the blocks small enough that every rank's fits in a half,
     * in multiples of 64 bytes, so that a piece never splits a basic
     * element of a datatype (packing stops at the last whole one) */
    size_t piece = MPL_MIN(bytes, s->half / (size_t) s->size);
    if (piece < bytes)
        piece &= ~(size_t) 63;
    if (piece == 0) {
        fallback_note(comm, "MPIR_CVAR_IBMC_NODE_SEG_SIZE holds less than 64 bytes per rank "
                      "of this communicator", &s->told);
        goto fn_exit;
    }
    side_t sd, rv;
    int in_place = sendbuf == MPI_IN_PLACE;
    side_init(&rv, recvbuf, recvcount, recvtype);
    if (in_place) {
        side_init(&sd, (char *) recvbuf + (MPI_Aint) s->rank * rv.stride, recvcount, recvtype);
    } else {
        side_init(&sd, sendbuf, sendcount, sendtype);
    }
    /* by multicast: every member decides alike, from the same sizes, the
     * same CVARs and the same (told) answer of the channel */
    int by_mcast = MPIR_CVAR_IBMC_NODE_RD_MCAST_MIN > 0 &&
        bytes >= (size_t) MPIR_CVAR_IBMC_NODE_RD_MCAST_MIN && MPIR_CVAR_IBMC_MCAST &&
        s->mcast_ok && !s->mcast_declined;
    if (by_mcast && MPIR_CVAR_IBMC_MCAST_MAX_BYTES > 0) {
        /* a node's blocks of a piece go in one broadcast, which the
         * channel takes up to MPIR_CVAR_IBMC_MCAST_MAX_BYTES */
        int most = 0;
        for (int k = 0; k < s->nnodes; k++)
            most = MPL_MAX(most, s->lay.node_count[k]);
        size_t fits = ((size_t) MPIR_CVAR_IBMC_MCAST_MAX_BYTES / (size_t) most) & ~(size_t) 63;
        if (fits == 0)
            by_mcast = 0;
        else if (fits < piece)
            piece = fits;
    }
    for (size_t off = 0; off < bytes; off += piece) {
        piece_t pc = { 0 };
        pc.off = (MPI_Aint) off;
        pc.len = MPL_MIN(piece, bytes - off);
        pc.whole = piece == bytes;
        pc.skip = in_place ? s->rank : -1;
        pc.rv = &rv;
        mpi_errno = run_piece(st, s, &sd, &pc, by_mcast && !s->mcast_declined);
        MPIR_ERR_CHECK(mpi_errno);
    }
    COUNT(node_rd_allgathers, 1);
    *used = 1;
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
