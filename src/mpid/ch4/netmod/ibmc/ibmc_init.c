/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <mpidimpl.h>
#include <sched.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "ibmc_types.h"
#include "ibmc_buffers.h"
#include "ibmc_util.h"
#include "mcast/ibmc_mcast.h"
#include "ibmc_nodeseg.h"
#include "mpidu_bc.h"
#include "ibmc_am_recv.h"
#include "ibmc_conn.h"
#include "ibmc_device.h"
#include "ibmc_finalize.h"
#include "ibmc_mem.h"
#include "ibmc_qp_fault.h"
#include "ibmc_rndv.h"
#include "ibmc_ud.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories :
    - name : CH4_IBMC
      description : Variables of the ch4:ibmc netmod (InfiniBand and RoCE through rdma-core verbs)

cvars:
    - name        : MPIR_CVAR_IBMC_DEVICE
      category    : CH4_IBMC
      type        : string
      default     : ""
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Name of the RDMA device to use, as ibv_devices lists it (for example
        mlx5_0 or rxe0).  Empty (the default) picks the device that hwloc
        reports as attached nearest to the process's cores, and among equals
        the first one with an active port.

    - name        : MPIR_CVAR_IBMC_PORT
      category    : CH4_IBMC
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Port number (1-based) of the device to use.  0 (the default) picks the
        first active port.

    - name        : MPIR_CVAR_IBMC_GID_INDEX
      category    : CH4_IBMC
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Index of the GID used to address the port.  -1 (the default) chooses:
        index 0 on InfiniBand; on RoCE a RoCE v2 GID, preferring one that maps
        an IPv4 address, then any RoCE v2 GID, then RoCE v1.  All processes of
        a job must use GIDs of the same type.

    - name        : MPIR_CVAR_IBMC_PACKET_SIZE
      category    : CH4_IBMC
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Bytes of each registered eager buffer, and so the largest packet on an
        RC queue pair (an 8-byte ibmc header, the CH4 header, data).  Eager
        messages that do not fit one packet travel as a train of packets; see
        MPIR_CVAR_IBMC_EAGER_LIMIT for which messages are eager.  0 (the
        default) sizes the buffers so that a point-to-point message of
        MPIR_CVAR_IBMC_EAGER_LIMIT bytes fits one packet with its headers
        (16448 bytes with the default limit), capped at
        MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE.  Otherwise from 1024 to
        MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE; all processes must agree.

    - name        : MPIR_CVAR_IBMC_RECV_BUFFERS
      category    : CH4_IBMC
      type        : int
      default     : 256
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Number of eager receive buffers the shared receive queue, which all
        of a process's RC queue pairs draw from, starts with.  Each connected
        peer is promised MPIR_CVAR_IBMC_EAGER_CREDITS + 2 buffers; once the
        promises exceed this pool, every new connection adds that many.
        Buffers of the pool that no peer was promised are lent to peers that
        stream (see MPIR_CVAR_IBMC_EAGER_CREDITS_MAX).  From 16 to the
        device's max_srq_wr.

    - name        : MPIR_CVAR_IBMC_EAGER_CREDITS
      category    : CH4_IBMC
      type        : int
      default     : 16
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Eager packets a process may have in flight to one peer before the
        peer gives the receive buffers back (credit-based flow control, so a
        receiver is never overrun): the window every connection starts with
        and keeps at least.  The receiver keeps this many buffers of
        MPIR_CVAR_IBMC_PACKET_SIZE, plus 2, posted for every peer it is
        connected to.  From 1 to 4096; all processes must agree.

    - name        : MPIR_CVAR_IBMC_EAGER_CREDITS_MAX
      category    : CH4_IBMC
      type        : int
      default     : 64
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Largest eager window a peer can be given.  A sender that had to wait
        for credits says so in its next packet, and the receiver then lends
        it up to MPIR_CVAR_IBMC_EAGER_CREDITS more, up to this many, out of
        receive buffers no peer was promised (MPIR_CVAR_IBMC_RECV_BUFFERS);
        it takes them back, a credit per packet, when another peer needs
        them.  Lending does not raise the receive-buffer limit.  Set it to
        MPIR_CVAR_IBMC_EAGER_CREDITS to keep every window fixed.  From
        MPIR_CVAR_IBMC_EAGER_CREDITS to 65535; all processes must agree.

    - name        : MPIR_CVAR_IBMC_SEND_BUFFERS
      category    : CH4_IBMC
      type        : int
      default     : 128
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Number of registered eager send buffers per process.  Sends beyond
        them wait in a per-peer queue until a buffer completes.  From 8 to
        65536.

    - name        : MPIR_CVAR_IBMC_SQ_DEPTH
      category    : CH4_IBMC
      type        : int
      default     : 64
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Send-queue depth of each RC queue pair: how many packets to one peer
        may be in flight.  From 4 to the device's max_qp_wr.

    - name        : MPIR_CVAR_IBMC_CONNECT_TIMEOUT
      category    : CH4_IBMC
      type        : int
      default     : 120
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Seconds to wait for a peer to answer a connection request before the
        operation fails with an error that names the peer.  Requests are
        repeated with exponential backoff meanwhile.  MPI_Finalize waits as
        long for a peer to take this process's last messages before it fails
        naming the peer.  Its barrier over RC waits for the other processes
        without a limit, as PMI's barrier does, and so do the connections it
        makes.  At least 1.

    - name        : MPIR_CVAR_IBMC_PROGRESS_YIELD
      category    : CH4_IBMC
      type        : enum
      default     : auto
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : |-
        Whether the progress engine calls sched_yield() after a poll that
        found no work, so that busy-polling processes share oversubscribed
        cores with the peers they wait for.
        auto   - yield when more processes use this HCA than the host has online CPUs
        always - always yield
        never  - never yield (lowest latency on dedicated cores)

    - name        : MPIR_CVAR_IBMC_COMPACT_SEND_HEADER
      category    : CH4_IBMC
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Send the header of an eager point-to-point message that fits one
        packet in a 16-byte form (24 bytes for MPI_Ssend) instead of
        MPICH's 48-byte MPIDIG header.  The receiver expands it, so
        processes may differ in this setting.  Set it to false only to
        measure what the compact form saves.

    - name        : MPIR_CVAR_IBMC_LIGHTWEIGHT_SEND
      category    : CH4_IBMC
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Post a standard-mode send (MPI_Send, MPI_Isend, and the sends of
        MPICH's collective algorithms) that fits one eager packet, to a
        connected peer with nothing queued ahead of it, straight from the
        netmod, and return MPICH's pre-completed request instead of creating
        an MPIDIG request for it.  The packet has the compact form of
        MPIDIG's eager path and is received the same way, so processes may
        differ in this setting.  It needs the
        compact header: with MPIR_CVAR_IBMC_COMPACT_SEND_HEADER=false it is
        off.  Set it to false only to measure what it saves.

    - name        : MPIR_CVAR_IBMC_STATS
      category    : CH4_IBMC
      type        : boolean
      default     : false
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Print, at MPI_Init, the device, port and GID each process uses, and at
        MPI_Finalize one line per peer with the packets and bytes that went
        over RC queue pairs in each direction (lines start with "ibmc-stats:").

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

#define IBMC_UD_RECV_BUFFERS 64
#define IBMC_UD_SEND_BUFFERS 32
#define IBMC_MAX_READS 64       /* RDMA READ work requests in flight, all peers together */
#define IBMC_MAX_MW_OPS 64      /* memory-window binds and invalidations in flight */
#define IBMC_MAX_READ_BYTES (1 << 30)

static int check_range(const char *name, int value, int lo, int hi)
{
    int mpi_errno = MPI_SUCCESS;
    if (value < lo || value > hi) {
        char why[96];
        snprintf(why, sizeof(why), "it must be between %d and %d", lo, hi);
        MPIR_ERR_SETANDJUMP3(mpi_errno, MPI_ERR_OTHER, "**ibmc_cvar", "**ibmc_cvar %s %d %s",
                             name, value, why);
    }
  fn_fail:
    return mpi_errno;
}

static size_t round_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

/* Register one region for all eager buffers and post the receive side. */
static int setup_buffers(MPIDI_IBMC_state_t * st)
{
    int mpi_errno = MPI_SUCCESS;
    size_t stride = (size_t) MPIDI_IBMC_global.packet_size;
    size_t s_sz = stride * st->n_sbufs;
    size_t r_sz = stride * st->n_rbufs;
    size_t udr_sz = (size_t) (IBMC_GRH_BYTES + IBMC_CM_MSG_BYTES) * st->n_ud_rbufs;
    size_t uds_sz = (size_t) IBMC_CM_MSG_BYTES * st->n_ud_sbufs;

    st->mem_sz = round_up(s_sz + r_sz + udr_sz + uds_sz, 4096);
    st->mem = MPL_aligned_alloc(4096, st->mem_sz, MPL_MEM_BUFFER);
    MPIR_ERR_CHKANDJUMP(!st->mem, mpi_errno, MPI_ERR_OTHER, "**nomem");
    memset(st->mem, 0, st->mem_sz);
    st->rbufs = st->mem + s_sz;
    st->ud_rbufs = st->rbufs + r_sz;
    st->ud_sbufs = st->ud_rbufs + udr_sz;

    st->mr = ibv_reg_mr(st->hca.pd, st->mem, st->mem_sz, IBV_ACCESS_LOCAL_WRITE);
    if (!st->mr) {
        mpi_errno = MPIDI_IBMC_VERBS_ERROR("ibv_reg_mr", errno);
        goto fn_fail;
    }

    st->sbufs = MPL_malloc(sizeof(*st->sbufs) * st->n_sbufs, MPL_MEM_BUFFER);
    MPIR_ERR_CHKANDJUMP(!st->sbufs, mpi_errno, MPI_ERR_OTHER, "**nomem");
    for (int i = 0; i < st->n_sbufs; i++) {
        st->sbufs[i].buf = st->mem + stride * i;
        st->sbufs[i].peer = -1;
        st->sbufs[i].next_free = i + 1 < st->n_sbufs ? i + 1 : -1;
    }
    st->sbuf_free = 0;

    for (int i = 0; i < st->n_rbufs; i++) {
        mpi_errno = MPIDI_IBMC_post_rbuf(st, i);
        MPIR_ERR_CHECK(mpi_errno);
    }
    st->rpool.posted = st->n_rbufs;
    for (int i = 0; i < st->n_ud_rbufs; i++) {
        mpi_errno = MPIDI_IBMC_ud_post_rbuf(st, i);
        MPIR_ERR_CHECK(mpi_errno);
    }
  fn_fail:
    return mpi_errno;
}

static void free_state(MPIDI_IBMC_state_t * st)
{
    if (!st)
        return;
    /* every QP and memory region goes before the protection domain and the
     * device they belong to (ibmc_verbs_teardown) */
    MPIDI_IBMC_conn_destroy_all(st);
    MPIDI_IBMC_rndv_free_all(st);
    MPIDI_IBMC_mem_finalize(st);
    MPIDI_IBMC_rbuf_free_chunks(st);
    if (st->probe_mr)
        ibv_dereg_mr(st->probe_mr);
    if (st->mr)
        ibv_dereg_mr(st->mr);
    ibmc_verbs_teardown(&st->hca);
    MPL_free(st->mem);
    MPL_free(st->sbufs);
    MPL_free(st->cards);
    MPL_free(st->conns);
    MPL_free(st);
}

int MPIDI_IBMC_init_local(int *tag_bits)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_IBMC_state_t *st = NULL;
    ibmc_verbs_err_t e;

    MPIR_FUNC_ENTER;

    /* the smallest packet must hold the CH4 headers */
    mpi_errno = check_range("MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE",
                            MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE, 1024, INT_MAX);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = check_range("MPIR_CVAR_IBMC_EAGER_LIMIT", MPIR_CVAR_IBMC_EAGER_LIMIT, 0,
                            MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE);
    MPIR_ERR_CHECK(mpi_errno);
    int packet_size = MPIR_CVAR_IBMC_PACKET_SIZE;
    if (packet_size == 0) {
        /* one packet for a point-to-point message at the eager limit */
        size_t fit = round_up((size_t) MPIR_CVAR_IBMC_EAGER_LIMIT + sizeof(ibmc_pkt_hdr_t) +
                              sizeof(MPIDIG_hdr_t), 64);
        fit = MPL_MIN(fit, (size_t) MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE);
        packet_size = (int) MPL_MAX(fit, 1024);
    } else {
        mpi_errno = check_range("MPIR_CVAR_IBMC_PACKET_SIZE", MPIR_CVAR_IBMC_PACKET_SIZE, 1024,
                                MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = check_range("MPIR_CVAR_IBMC_EAGER_CREDITS", MPIR_CVAR_IBMC_EAGER_CREDITS, 1,
                            4096);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = check_range("MPIR_CVAR_IBMC_EAGER_CREDITS_MAX", MPIR_CVAR_IBMC_EAGER_CREDITS_MAX,
                            MPIR_CVAR_IBMC_EAGER_CREDITS, IBMC_CREDIT_MAX);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = check_range("MPIR_CVAR_IBMC_SEND_BUFFERS", MPIR_CVAR_IBMC_SEND_BUFFERS, 8, 65536);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = check_range("MPIR_CVAR_IBMC_CONNECT_TIMEOUT", MPIR_CVAR_IBMC_CONNECT_TIMEOUT, 1,
                            INT_MAX);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = check_range("MPIR_CVAR_IBMC_PORT", MPIR_CVAR_IBMC_PORT, 0, 255);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = check_range("MPIR_CVAR_IBMC_GID_INDEX", MPIR_CVAR_IBMC_GID_INDEX, -1, 65535);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_IBMC_mcast_check_cvars();
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_IBMC_nodeseg_check_cvars();
    MPIR_ERR_CHECK(mpi_errno);
    if (MPIDI_global.n_vcis > 1) {
        MPIR_ERR_SETANDJUMP3(mpi_errno, MPI_ERR_OTHER, "**ibmc_cvar", "**ibmc_cvar %s %d %s",
                             "MPIR_CVAR_CH4_NUM_VCIS", MPIDI_global.n_vcis,
                             "ibmc drives a single VCI");
    }

    st = MPL_calloc(1, sizeof(*st), MPL_MEM_OTHER);
    MPIR_ERR_CHKANDJUMP(!st, mpi_errno, MPI_ERR_OTHER, "**nomem");
    ibmc_cookie_init(&st->rndv_cookies);
    MPIDI_IBMC_am_rules_refresh(st);

    mpi_errno = MPIDI_IBMC_device_open(&st->hca, st->hca_name, sizeof(st->hca_name));
    MPIR_ERR_CHECK(mpi_errno);

    const struct ibv_device_attr *da = &st->hca.dev_attr;
    mpi_errno = check_range("MPIR_CVAR_IBMC_RECV_BUFFERS", MPIR_CVAR_IBMC_RECV_BUFFERS, 16,
                            da->max_srq_wr);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = check_range("MPIR_CVAR_IBMC_SQ_DEPTH", MPIR_CVAR_IBMC_SQ_DEPTH, 4, da->max_qp_wr);
    MPIR_ERR_CHECK(mpi_errno);

    st->n_sbufs = MPIR_CVAR_IBMC_SEND_BUFFERS;
    st->n_rbufs = MPIR_CVAR_IBMC_RECV_BUFFERS;
    st->n_ud_rbufs = IBMC_UD_RECV_BUFFERS;
    st->n_ud_sbufs = IBMC_UD_SEND_BUFFERS;
    st->sq_depth = MPIR_CVAR_IBMC_SQ_DEPTH;
    st->my_rank = MPIR_Process.rank;
    st->world_size = MPIR_Process.size;

    struct ibv_port_attr pa;
    st->max_read = IBMC_MAX_READ_BYTES;
    if (!ibv_query_port(st->hca.ctx, st->hca.port, &pa) && pa.max_msg_sz > 0)
        st->max_read = MPL_MIN(st->max_read, (size_t) pa.max_msg_sz);
    st->max_reads = IBMC_MAX_READS;
    st->max_mw_ops = IBMC_MAX_MW_OPS;
    st->use_mw = MPIR_CVAR_IBMC_RNDV_WINDOW &&
        (da->device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) && da->max_mw > 0;

    /* every send and READ is signaled and every receive completes, so this
     * bounds the CQ */
    int cq_fixed = st->n_sbufs + st->max_reads + st->max_mw_ops + st->n_ud_rbufs +
        st->n_ud_sbufs + 16;
    mpi_errno = check_range("CQ entries (send + receive buffers)", cq_fixed + st->n_rbufs, 1,
                            da->max_cqe);
    MPIR_ERR_CHECK(mpi_errno);
    /* Room in the SRQ (and CQ) for a chunk of receive buffers per peer,
     * as far as the device allows; the memory is only allocated as peers
     * connect (ibmc_am_recv.c). */
    st->rchunk_bufs = MPIR_CVAR_IBMC_EAGER_CREDITS + IBMC_CREDIT_SPARE;
    long srq_cap = MPL_MIN((long) da->max_srq_wr, (long) da->max_cqe - cq_fixed);
    long want = (long) st->n_rbufs + (long) st->rchunk_bufs * (st->world_size - 1);
    srq_cap = MPL_MIN(srq_cap, want);
    st->max_rchunks = (int) ((srq_cap - st->n_rbufs) / st->rchunk_bufs);
    if (st->max_rchunks < 0)
        st->max_rchunks = 0;
    srq_cap = st->n_rbufs + (long) st->max_rchunks * st->rchunk_bufs;
    st->rchunk_mem = MPL_calloc(st->max_rchunks + 1, sizeof(char *), MPL_MEM_BUFFER);
    st->rchunk_mr = MPL_calloc(st->max_rchunks + 1, sizeof(struct ibv_mr *), MPL_MEM_BUFFER);
    MPIR_ERR_CHKANDJUMP(!st->rchunk_mem || !st->rchunk_mr, mpi_errno, MPI_ERR_OTHER, "**nomem");
    int cq_depth = cq_fixed + (int) srq_cap;
    if (ibmc_verbs_setup(&st->hca, cq_depth, (int) srq_cap, &e) ||
        ibmc_verbs_create_ud_qp(&st->hca, 0, st->n_ud_sbufs, st->n_ud_rbufs, &e)) {
        mpi_errno = MPIDI_IBMC_VERBS_ERROR(e.call, e.err);
        goto fn_fail;
    }

    MPIDI_IBMC_global.packet_size = packet_size;
    /* the first packet of a multi-packet message also carries its size */
    MPIDI_IBMC_global.am_hdr_max_sz = MPL_MIN(packet_size - ibmc_pkt_hdr_len(1),
                                              IBMC_PKT_MAX_AM_HDR);
    MPIDI_IBMC_global.eager_limit = packet_size - ibmc_pkt_hdr_len(0);
    MPIDI_IBMC_global.send16 = MPIR_CVAR_IBMC_COMPACT_SEND_HEADER;
    MPIDI_IBMC_global.lightweight = MPIR_CVAR_IBMC_COMPACT_SEND_HEADER &&
        MPIR_CVAR_IBMC_LIGHTWEIGHT_SEND;
    MPIDI_IBMC_global.rndv_threshold = MPIR_CVAR_IBMC_EAGER_LIMIT;
    MPIDI_IBMC_global.state = st;
    MPIDI_IBMC_pvars_register();

    mpi_errno = MPIDI_IBMC_mem_init(st);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_IBMC_qp_fault_init(st);
    MPIR_ERR_CHECK(mpi_errno);

    mpi_errno = setup_buffers(st);
    MPIR_ERR_CHECK(mpi_errno);

    /* REQ/REP retransmission: fast at first (a lost datagram costs ~one round
     * trip), backing off so that a slow peer is not flooded. */
    st->cm_timing.first_retry = 0.05;
    st->cm_timing.max_retry = 2.0;
    st->cm_timing.timeout = MPIR_CVAR_IBMC_CONNECT_TIMEOUT;

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    MPIDI_IBMC_global.state = NULL;
    free_state(st);
    goto fn_exit;
}

static uint64_t card_hash(const ibmc_card_t * c)
{
    /* FNV-1a over a card with a random nonce: the key tells jobs apart, and
     * without the nonce nobody can compute it */
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *) c;
    for (size_t i = 0; i < sizeof(*c); i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

static int decide_yield(MPIDI_IBMC_state_t * st)
{
    if (MPIR_CVAR_IBMC_PROGRESS_YIELD == MPIR_CVAR_IBMC_PROGRESS_YIELD_always)
        return 1;
    if (MPIR_CVAR_IBMC_PROGRESS_YIELD == MPIR_CVAR_IBMC_PROGRESS_YIELD_never)
        return 0;
    /* Processes sharing our port are on our host whatever MPIR_CVAR_NUM_CLIQUES
     * says about nodes; compare them with the host's CPUs. */
    int sharing = 0;
    for (int i = 0; i < st->world_size; i++) {
        if (!memcmp(st->cards[i].gid, st->cards[st->my_rank].gid, 16) &&
            st->cards[i].lid == st->cards[st->my_rank].lid)
            sharing++;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 && sharing > cpus;
}

int MPIDI_IBMC_init_world(void)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_IBMC_state_t *st = MPIDI_IBMC_STATE();
    ibmc_card_t card;
    ibmc_verbs_err_t e;
    void *table = NULL;

    MPIR_FUNC_ENTER;

    ibmc_verbs_fill_card(&st->hca, &card);
    /* The job key is a hash of rank 0's card (below); its random nonce
     * keeps another job, or a process on the fabric, from computing it. */
    card.nonce = MPIDI_IBMC_random_u64();
    /* fixed-size cards: the table holds them back to back, by world rank */
    mpi_errno = MPIDU_bc_table_create(st->my_rank, st->world_size, MPIR_Process.node_map, &card,
                                      (int) sizeof(card), TRUE, 0, &table, NULL);
    MPIR_ERR_CHECK(mpi_errno);

    st->cards = MPL_malloc(sizeof(ibmc_card_t) * st->world_size, MPL_MEM_ADDRESS);
    st->conns = MPL_calloc(st->world_size, sizeof(MPIDI_IBMC_conn_t), MPL_MEM_ADDRESS);
    MPIR_ERR_CHKANDJUMP(!st->cards || !st->conns, mpi_errno, MPI_ERR_OTHER, "**nomem");
    memcpy(st->cards, table, sizeof(ibmc_card_t) * st->world_size);
    mpi_errno = MPIDU_bc_table_destroy();
    MPIR_ERR_CHECK(mpi_errno);

    for (int i = 0; i < st->world_size; i++) {
        MPIDI_IBMC_conn_t *c = &st->conns[i];
        c->rank = i;
        ibmc_cm_init(&c->cm);
        ibmc_reasm_init(&c->rx);
        ibmc_credit_init(&c->cr, MPIR_CVAR_IBMC_EAGER_CREDITS, MPIR_CVAR_IBMC_EAGER_CREDITS_MAX);
        MPIDI_IBMC_AV(&MPIDIU_get_av(0, i)).world_rank = i;
    }
    st->job_key = card_hash(&st->cards[0]);
    /* Connection datagrams use a Q_Key only the job knows.  A peer still on
     * the initial key for a moment drops our first REQ, which is sent again. */
    st->ud_qkey = (uint32_t) (st->job_key >> 32) & IBMC_QKEY_MASK;
    if (ibmc_verbs_set_qkey(st->hca.ud_qp, st->ud_qkey, &e)) {
        mpi_errno = MPIDI_IBMC_VERBS_ERROR(e.call, e.err);
        goto fn_fail;
    }
    st->yield = decide_yield(st);
    ibmc_finbar_init(&st->finbar, st->my_rank, st->world_size);

    if (MPIR_CVAR_IBMC_STATS) {
        char gid[40];
        inet_ntop(AF_INET6, st->hca.gid.raw, gid, sizeof(gid));
        printf("ibmc-stats: rank %d device %s port %d link %s gid[%d] %s yield %d\n",
               st->my_rank, st->hca_name, st->hca.port,
               st->hca.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand",
               st->hca.gid_index, gid, st->yield);
        fflush(stdout);
    }

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_IBMC_post_init(void)
{
    MPIDI_IBMC_state_t *st = MPIDI_IBMC_STATE();
    if (st && unlikely(st->qp_fault_at) && st->qp_fault_kind == IBMC_QP_FAULT_FORGE_CM)
        return MPIDI_IBMC_ud_forge_test(st);
    return MPI_SUCCESS;
}

static int count_connections(const MPIDI_IBMC_state_t * st)
{
    int n = 0;
    for (int i = 0; st->conns && i < st->world_size; i++)
        n += st->conns[i].qp != NULL;
    return n;
}

/* The connections the job's own traffic used.  Peers ahead in MPI_Finalize
 * may already have connected to this process for their barrier; those
 * carried only the handshake's last step and barrier messages, if
 * anything yet. */
static int count_job_connections(const MPIDI_IBMC_state_t * st)
{
    int n = 0;
    for (int i = 0; st->conns && i < st->world_size; i++) {
        const MPIDI_IBMC_conn_t *c = &st->conns[i];
        n += c->qp && c->tx_pkts + c->rx_pkts > c->upkeep_pkts;
    }
    return n;
}

/* The job's traffic, before MPI_Finalize's barrier adds its own. */
static void print_job_stats(const MPIDI_IBMC_state_t * st)
{
    for (int i = 0; i < st->world_size; i++) {
        const MPIDI_IBMC_conn_t *c = &st->conns[i];
        if (!c->tx_pkts && !c->rx_pkts)
            continue;
        printf("ibmc-stats: rank %d peer %d tx_pkts %llu tx_bytes %llu rx_pkts %llu "
               "rx_bytes %llu cm_retransmits %u rndv_tx %llu rndv_rx %llu "
               "rndv_read_bytes %llu rndv_bounced %llu window %d lends %llu\n", st->my_rank, i,
               (unsigned long long) c->tx_pkts, (unsigned long long) c->tx_bytes,
               (unsigned long long) c->rx_pkts, (unsigned long long) c->rx_bytes,
               c->cm.retransmits, (unsigned long long) c->rndv_tx,
               (unsigned long long) c->rndv_rx, (unsigned long long) c->rndv_read_bytes,
               (unsigned long long) c->rndv_bounced, c->cr.window,
               (unsigned long long) c->cr.lends);
    }
    printf("ibmc-stats: rank %d connections %d recv_chunks %d rcache hits %llu misses %llu "
           "evictions %llu invalidations %llu uncached_regs %llu\n", st->my_rank,
           count_job_connections(st), st->n_rchunks,
           (unsigned long long) st->rcache.hits, (unsigned long long) st->rcache.misses,
           (unsigned long long) st->rcache.evictions,
           (unsigned long long) st->rcache.invalidations, (unsigned long long) st->reg_uncached);
    fflush(stdout);
}

int MPIDI_IBMC_mpi_finalize_hook(void)
{
    int mpi_errno = MPI_SUCCESS, nconn_job;
    MPIDI_IBMC_state_t *st = MPIDI_IBMC_STATE();

    MPIR_FUNC_ENTER;
    if (!st)
        goto fn_exit;

    /* The multicast channel's roots first: they may still have to answer
     * NAKs, and ask members for their last ACKs. */
    MPIDI_IBMC_mcast_serve_retiring(st);
    MPIDI_IBMC_nodeseg_finalize(st);
    /* Then this process's sends, and every process's arrival, with the
     * progress engine running: a member still answers a root's question
     * while it waits for the others (ibmc_finalize.c). */
    mpi_errno = MPIDI_IBMC_fin_drain(st);
    MPIR_ERR_CHECK(mpi_errno);
    nconn_job = count_job_connections(st);
    if (MPIR_CVAR_IBMC_STATS && st->conns)
        print_job_stats(st);
    mpi_errno = MPIDI_IBMC_fin_barrier(st);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_IBMC_mcast_finalize(st);
    mpi_errno = MPIDI_IBMC_fin_settle(st);
    MPIR_ERR_CHECK(mpi_errno);
    if (MPIR_CVAR_IBMC_STATS && st->conns) {
        printf("ibmc-stats: rank %d finalize rounds %d connections_added %d mcast_dropped %llu\n",
               st->my_rank, st->finbar.rounds, count_connections(st) - nconn_job,
               (unsigned long long) st->fin_mcast_dropped);
        fflush(stdout);
    }
    mpi_errno = MPIR_pmi_barrier();
    MPIR_ERR_CHECK(mpi_errno);
    /* every process has drained its sends, its ACK writes among them */
    MPIDI_IBMC_mcast_free(st);

    MPIDI_IBMC_global.state = NULL;
    free_state(st);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
