/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The hardware-multicast channel: verbs and rdma_cm around the protocol of
 * ibmc_mcast_rx.c and ibmc_mcast_tx.c (the design, with the seed sections
 * it follows: doc/design.md, "Multicast channel").
 *
 * One multicast UD queue pair per process, with its own completion queue
 * and receive pool, so that the RC path's completion queue never sees
 * multicast traffic.  Groups come from a pool the communicators share
 * (ibmc_mcast_pool.h), joined with rdma_join_multicast on the device and
 * port the netmod already uses (the subnet manager on InfiniBand, an IP
 * multicast join on RoCE) when a communicator's first multicast broadcast
 * needs one, and kept until MPI_Finalize.  Members exchange their queue
 * pair numbers and whether the join worked, so they all use the group or
 * all fall back.  ACKs, NAKs and retransmissions travel as IBMC_PKT_MCAST
 * packets on the RC connections.
 *
 * Everything here runs under the VCI 0 lock, like the rest of the netmod. */

#include <mpidimpl.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include "ibmc_ipoib.h"
#include "ibmc_types.h"
#include "ibmc_mcast.h"
#include "ibmc_coll.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_IBMC_MCAST
      category    : CH4_IBMC
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        The hardware-multicast channel that the ibmc_mcast broadcast algorithm
        (MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast) uses.  false turns it off
        entirely: no group is joined and the algorithm runs MPICH's binomial
        tree, counting each broadcast in the ibmc_mcast_fallbacks pvar.  All
        processes must agree.

    - name        : MPIR_CVAR_IBMC_MCAST_WINDOW
      category    : CH4_IBMC
      type        : int
      default     : 64
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Packets of a communicator's multicast stream that may be outstanding:
        sent by a root and not yet acknowledged by every member.  A root keeps
        that many packets (header and up to one path MTU of data each) in a
        registered ring to answer NAKs, and every member keeps as many slots
        for packets that arrive before their broadcast is entered.  A power
        of two from 2 to 32768; all processes must agree.

    - name        : MPIR_CVAR_IBMC_MCAST_ACK_EVERY
      category    : CH4_IBMC
      type        : int
      default     : 16
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        A member acknowledges the multicast stream once every this many
        packets, at positions that differ from member to member (the skewed
        ACK of Liu, Mamidala and Panda), and also whenever a root whose
        window is half full asks.  0 acknowledges only when asked.  A power
        of two up to MPIR_CVAR_IBMC_MCAST_WINDOW, or 0.

    - name        : MPIR_CVAR_IBMC_MCAST_SUBGROUP
      category    : CH4_IBMC
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Members of a multicast channel per co-root subgroup (co-roots of Liu,
        Mamidala and Panda).  For each root the members are split into
        subgroups of this many, counted from the root; the first of each
        other subgroup is a co-root, which also gets every packet over RC,
        relayed down a binomial tree of co-roots, answers its subgroup's
        NAKs and acknowledges for it, so a root hears from about
        size/SUBGROUP + SUBGROUP members instead of all.  0 (the default)
        takes it from the model of the root's time per packet, T_um*log2(n/s)
        + T_pack*s/M with M = MPIR_CVAR_IBMC_MCAST_ACK_EVERY (each member
        acknowledges once every M packets), whose minimum is at s =
        M*T_um/(T_pack*ln 2): 2*M with the published InfiniBand figures in
        doc/benchmarks.md (32 with the default M), so communicators of up to
        that many nodes have no co-roots; with M = 0 there are none.  A value
        at least the communicator's size also means none.  All processes
        must agree.

    - name        : MPIR_CVAR_IBMC_MCAST_RECV_BUFFERS
      category    : CH4_IBMC
      type        : int
      default     : 256
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Receive buffers (one path MTU each) posted to the multicast queue
        pair, shared by all communicators.  A packet that finds none is lost
        and recovered by NAK.  From 16 to the device's max_qp_wr.

    - name        : MPIR_CVAR_IBMC_MCAST_GROUPS
      category    : CH4_IBMC
      type        : int
      default     : 16
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Multicast groups a process may hold, shared by all its communicators.
        A group is joined the first time a communicator's broadcast needs
        one and kept until MPI_Finalize, so creating and freeing
        communicators does not join and leave groups (which costs a subnet
        manager transaction each, and leaks multicast LIDs on some).  A new
        communicator takes a group no member is using; with more live
        communicators than groups, some share one (each member then also
        receives, and drops, the other communicator's packets).  Every
        process of the job must use the same value.  From 1 to 64.

    - name        : MPIR_CVAR_IBMC_MCAST_NAK_TIMEOUT
      category    : CH4_IBMC
      type        : int
      default     : 200
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        The shortest time, in microseconds, that a member waits in MPI_Bcast
        without receiving anything before it asks the root, over RC, for
        every fragment it still lacks.  A gap (a later packet before an
        earlier one) is asked for at once; this timeout catches the last
        fragments of a message, which no later packet reveals.  The timeout
        in force adapts per communicator: it stays above two round trips of
        a NAK and its answer as measured, doubles when a retransmission
        arrives for a packet that multicast had delivered after all, and
        doubles on each further silence within a broadcast, up to 100 ms.
        From 1 to 10000000.

    - name        : MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT
      category    : CH4_IBMC
      type        : int
      default     : 10
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Seconds to wait for a multicast group join (rdma_join_multicast) to
        complete, and then for the routing probe: the communicator's rank 0
        multicasts a probe until every member has answered, so that a group
        the fabric does not deliver to some member is found before first use.
        A member whose join fails or times out, or that the probe does not
        reach, makes every member of the communicator fall back to MPICH's
        binomial broadcast.  At least 1.

    - name        : MPIR_CVAR_IBMC_MCAST_MAX_BYTES
      category    : CH4_IBMC
      type        : int
      default     : 1048576
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Largest broadcast, in bytes, that ibmc_mcast sends by multicast;
        larger ones run MPICH's binomial tree, whose large point-to-point
        messages go by zero-copy rendezvous.  0 sends every size by
        multicast.

    - name        : MPIR_CVAR_IBMC_MCAST_RDMA_ACKS
      category    : CH4_IBMC
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Deliver multicast ACKs as RDMA writes into a board of one word per
        member that the root or co-root registered and polls (Liu, Mamidala
        and Panda, section 5.5), instead of as RC messages.  A written ACK
        takes no receive buffer or credit at the root, and a newer one
        overwrites an older one not yet read.  An ACK to a process not yet
        connected, or whose connection has sends queued, still goes as an
        RC message.  The ibmc_mcast_acks_written pvar counts the writes.
        false sends every ACK as an RC message.

    - name        : MPIR_CVAR_IBMC_MCAST_FAULTS
      category    : CH4_IBMC
      type        : string
      default     : ""
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        A testing knob: drop, duplicate and reorder received multicast
        packets before the protocol sees them, for example
        "drop=0.1,dup=0.05,reorder=0.05,seed=7" (probabilities per packet,
        deterministic for a seed, different on every rank).  Soft-RoCE loses
        nothing on its own; this exercises the NAK and retransmission paths.
        late_ack=P also writes, after a written ACK of a communicator in
        use and with probability P, a word of an earlier epoch over it, as a
        late write of an earlier channel on a reused ACK board would; the
        owner must ask for that ACK again.  Empty (the default) injects
        nothing.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

#define IBMC_MCAST_SQ_DEPTH 32
#define IBMC_MCAST_POLL 16
#define IBMC_MCAST_NAK_RANGES 8
#define IBMC_MCAST_NAK_MAX_US 100000
#define IBMC_MCAST_RETIRE_SECONDS 10.0

#define MCAST_CHAN(comm) ((MPIDI_IBMC_mcast_chan_t *) (comm)->dev.ch4.netmod.ibmc.coll)

static int cvar_error(const char *name, int value, const char *why)
{
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**ibmc_cvar", "**ibmc_cvar %s %d %s", name, value,
                                why);
}

static int is_pow2(int x)
{
    return x > 0 && (x & (x - 1)) == 0;
}

int MPIDI_IBMC_mcast_check_cvars(void)
{
    int mpi_errno = MPI_SUCCESS;
    int w = MPIR_CVAR_IBMC_MCAST_WINDOW, m = MPIR_CVAR_IBMC_MCAST_ACK_EVERY;
    if (MPIR_CVAR_IBMC_MCAST_SUBGROUP < 0)
        return cvar_error("MPIR_CVAR_IBMC_MCAST_SUBGROUP", MPIR_CVAR_IBMC_MCAST_SUBGROUP,
                          "it must be 0 (from the model) or a subgroup size of at least 1");
    if (!is_pow2(w) || w < 2 || w > IBMC_MCAST_WINDOW_MAX)
        return cvar_error("MPIR_CVAR_IBMC_MCAST_WINDOW", w,
                          "it must be a power of two from 2 to 32768");
    if (m != 0 && (!is_pow2(m) || m > w))
        return cvar_error("MPIR_CVAR_IBMC_MCAST_ACK_EVERY", m,
                          "it must be 0 or a power of two up to MPIR_CVAR_IBMC_MCAST_WINDOW");
    if (MPIR_CVAR_IBMC_MCAST_GROUPS < 1 || MPIR_CVAR_IBMC_MCAST_GROUPS > IBMC_MCAST_POOL_MAX)
        return cvar_error("MPIR_CVAR_IBMC_MCAST_GROUPS", MPIR_CVAR_IBMC_MCAST_GROUPS,
                          "it must be between 1 and 64");
    if (MPIR_CVAR_IBMC_MCAST_RECV_BUFFERS < 16)
        return cvar_error("MPIR_CVAR_IBMC_MCAST_RECV_BUFFERS", MPIR_CVAR_IBMC_MCAST_RECV_BUFFERS,
                          "it must be at least 16");
    if (MPIR_CVAR_IBMC_MCAST_NAK_TIMEOUT < 1 || MPIR_CVAR_IBMC_MCAST_NAK_TIMEOUT > 10000000)
        return cvar_error("MPIR_CVAR_IBMC_MCAST_NAK_TIMEOUT", MPIR_CVAR_IBMC_MCAST_NAK_TIMEOUT,
                          "it must be between 1 and 10000000");
    if (MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT < 1)
        return cvar_error("MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT", MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT,
                          "it must be at least 1");
    if (MPIR_CVAR_IBMC_MCAST_MAX_BYTES < 0)
        return cvar_error("MPIR_CVAR_IBMC_MCAST_MAX_BYTES", MPIR_CVAR_IBMC_MCAST_MAX_BYTES,
                          "it must be 0 or more");
    ibmc_mcast_faults_spec_t spec;
    char why[160];
    if (ibmc_mcast_faults_parse(MPIR_CVAR_IBMC_MCAST_FAULTS, &spec, why, sizeof(why))) {
        mpi_errno = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                         MPI_ERR_OTHER, "**ibmc_cvar_str",
                                         "**ibmc_cvar_str %s %s %s",
                                         "MPIR_CVAR_IBMC_MCAST_FAULTS",
                                         MPIR_CVAR_IBMC_MCAST_FAULTS, why);
    }
    return mpi_errno;
}

/* ---- the engine: one multicast QP per process ---- */

static uint32_t mtu_bytes(enum ibv_mtu m)
{
    return 128u << (m < IBV_MTU_256 ? 0 : m);
}

static int post_recv(MPIDI_IBMC_mcast_t * mc, int idx)
{
    struct ibv_sge sge = {
        .addr = (uintptr_t) (mc->rbufs + (size_t) idx * mc->rbuf_sz),
        .length = (uint32_t) mc->rbuf_sz,
        .lkey = mc->rmr->lkey
    };
    struct ibv_recv_wr wr = {.wr_id = (uint64_t) idx,.sg_list = &sge,.num_sge = 1 }, *bad;
    return ibv_post_recv(mc->qp, &wr, &bad);
}

/* The IPv4 address rdma_cm binds to: the one the RoCE GID in use maps, or,
 * on InfiniBand, that of an IPoIB interface of the port. */
static int local_ipv4(MPIDI_IBMC_state_t * st, struct sockaddr_in *sin, char *why, size_t len)
{
    const uint8_t *g = st->hca.gid.raw;
    static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    memset(sin, 0, sizeof(*sin));
    sin->sin_family = AF_INET;
    if (st->hca.link_layer == IBV_LINK_LAYER_INFINIBAND) {
        if (ibmc_ipoib_ipv4(g, &sin->sin_addr) == 0)
            return 0;
        snprintf(why, len, "%s port %d has no IPoIB interface with an IPv4 address, which "
                 "rdma_cm needs to join multicast groups on InfiniBand", st->hca_name,
                 st->hca.port);
        return -1;
    }
    if (!memcmp(g, v4mapped, sizeof(v4mapped))) {
        memcpy(&sin->sin_addr, g + 12, 4);
        return 0;
    }
    snprintf(why, len, "GID %d of %s port %d maps no IPv4 address for rdma_cm (multicast needs "
             "a RoCE v2 IPv4 GID, see MPIR_CVAR_IBMC_GID_INDEX)", st->hca.gid_index,
             st->hca_name, st->hca.port);
    return -1;
}

static void engine_fail(MPIDI_IBMC_mcast_t * mc, const char *call, int err)
{
    char ebuf[96];
    mc->state = -1;
    snprintf(mc->why, sizeof(mc->why), "%s failed: %s", call,
             MPIR_Strerror(err ? err : EIO, ebuf, sizeof(ebuf)));
}

/* Sets mc->state to 1, or to -1 with mc->why. */
static void engine_init(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc)
{
    struct sockaddr_in sin;
    ibmc_verbs_err_t e;
    char why[160];

    mc->state = -1;
    ibmc_mcast_pool_init(&mc->pool, MPIR_CVAR_IBMC_MCAST_GROUPS);
    ibmc_mcast_faults_parse(MPIR_CVAR_IBMC_MCAST_FAULTS, &mc->fault_spec, why, sizeof(why));
    ibmc_mcast_faults_init(&mc->faults, &mc->fault_spec, (uint64_t) st->my_rank + 1);
    if (local_ipv4(st, &sin, mc->why, sizeof(mc->why)))
        return;
    mc->evch = rdma_create_event_channel();
    if (!mc->evch)
        return engine_fail(mc, "rdma_create_event_channel", errno);
    int fl = fcntl(mc->evch->fd, F_GETFL);
    if (fl < 0 || fcntl(mc->evch->fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return engine_fail(mc, "fcntl(O_NONBLOCK) on the rdma_cm event channel", errno);
    if (rdma_create_id(mc->evch, &mc->id, mc, RDMA_PS_UDP))
        return engine_fail(mc, "rdma_create_id", errno);
    if (rdma_bind_addr(mc->id, (struct sockaddr *) &sin)) {
        char a[INET_ADDRSTRLEN];
        snprintf(why, sizeof(why), "rdma_bind_addr(%s)",
                 inet_ntop(AF_INET, &sin.sin_addr, a, sizeof(a)));
        return engine_fail(mc, why, errno);
    }
    if (!mc->id->verbs ||
        strcmp(ibv_get_device_name(mc->id->verbs->device), ibv_get_device_name(st->hca.ctx->device))) {
        snprintf(mc->why, sizeof(mc->why), "rdma_cm bound the port's address to device %s, "
                 "not %s", mc->id->verbs ? ibv_get_device_name(mc->id->verbs->device) : "(none)",
                 st->hca_name);
        return;
    }

    mc->mtu = mtu_bytes(st->hca.active_mtu);
    mc->payload_max = mc->mtu - (uint32_t) sizeof(ibmc_mcast_hdr_t);
    if (MPIDI_IBMC_global.eager_limit < (MPI_Aint) (sizeof(ibmc_mcast_rc_t) + mc->mtu)) {
        snprintf(mc->why, sizeof(mc->why), "an RC packet (MPIR_CVAR_IBMC_PACKET_SIZE) cannot "
                 "carry a retransmitted %u-byte multicast packet", mc->mtu);
        return;
    }
    mc->rbuf_sz = IBMC_GRH_BYTES + mc->mtu;
    mc->n_rbufs = MPL_MIN(MPIR_CVAR_IBMC_MCAST_RECV_BUFFERS, st->hca.dev_attr.max_qp_wr);
    mc->sq_depth = IBMC_MCAST_SQ_DEPTH;
    mc->cq = ibv_create_cq(st->hca.ctx, mc->n_rbufs + mc->sq_depth + 16, NULL, NULL, 0);
    if (!mc->cq)
        return engine_fail(mc, "ibv_create_cq(multicast)", errno);
    if (ibmc_verbs_create_mcast_qp(&st->hca, mc->cq, RDMA_UDP_QKEY, mc->sq_depth, mc->n_rbufs,
                                   &mc->qp, &e))
        return engine_fail(mc, e.call, e.err);
    /* one more buffer past the receive ones: the routing probe is sent from it */
    size_t sz = mc->rbuf_sz * ((size_t) mc->n_rbufs + 1);
    mc->rbufs = MPL_aligned_alloc(4096, sz, MPL_MEM_BUFFER);
    if (!mc->rbufs)
        return engine_fail(mc, "allocating multicast receive buffers", ENOMEM);
    mc->rmeta = MPL_calloc(mc->n_rbufs, sizeof(*mc->rmeta), MPL_MEM_OTHER);
    if (!mc->rmeta)
        return engine_fail(mc, "allocating multicast receive buffers", ENOMEM);
    mc->rmr = ibv_reg_mr(st->hca.pd, mc->rbufs, sz, IBV_ACCESS_LOCAL_WRITE);
    if (!mc->rmr)
        return engine_fail(mc, "ibv_reg_mr(multicast receive buffers)", errno);
    mc->probe_pkt = mc->rbufs + mc->rbuf_sz * (size_t) mc->n_rbufs;
    for (int i = 0; i < mc->n_rbufs; i++) {
        int rc = post_recv(mc, i);
        if (rc)
            return engine_fail(mc, "ibv_post_recv(multicast)", rc);
    }
    mc->state = 1;
}

static MPIDI_IBMC_mcast_t *engine(MPIDI_IBMC_state_t * st)
{
    if (!st->mcast) {
        st->mcast = MPL_calloc(1, sizeof(MPIDI_IBMC_mcast_t), MPL_MEM_OTHER);
        if (!st->mcast)
            return NULL;
        engine_init(st, st->mcast);
    }
    return st->mcast;
}

/* ---- channels ---- */

static MPIDI_IBMC_mcast_chan_t *find_chan(MPIDI_IBMC_mcast_t * mc, uint32_t context_id,
                                          uint32_t epoch)
{
    for (MPIDI_IBMC_mcast_chan_t * c = mc->chans; c; c = c->next)
        if (c->context_id == context_id && c->epoch == epoch &&
            (c->state == IBMC_MCAST_CHAN_READY || c->state == IBMC_MCAST_CHAN_RETIRING ||
             c->state == IBMC_MCAST_CHAN_PROBING))
            return c;
    return NULL;
}

/* The communicator rank of world rank w, or -1. */
static int rank_of_world(const MPIDI_IBMC_mcast_chan_t * c, int w)
{
    for (int r = 0; r < c->size; r++)
        if (c->world[r] == w)
            return r;
    return -1;
}

static int rank_of_qpn(const MPIDI_IBMC_mcast_chan_t * c, uint32_t qpn)
{
    for (int r = 0; r < c->size; r++)
        if (c->qpn[r] == qpn)
            return r;
    return -1;
}

/* One IBMC_PKT_MCAST message to member `to`: header h, then len bytes of
 * pkt (a multicast packet, for DATA and RELAY) with pkt_flags added to the
 * copy's IBMC_MCAST_F_* flags. */
static int post_rc(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_chan_t * c, int to,
                   ibmc_mcast_rc_t * h, const void *pkt, size_t len, uint16_t pkt_flags)
{
    char buf[sizeof(ibmc_mcast_rc_t) + 4096 + sizeof(ibmc_mcast_hdr_t)];
    h->context_id = c->context_id;
    h->epoch = c->epoch;
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
                                (MPI_Aint) (sizeof(*h) + len), 0, 0, 0, NULL);
}

static int send_rc(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_chan_t * c, int to, int kind,
                   uint32_t a, uint32_t b, int root, const void *pkt, size_t len)
{
    ibmc_mcast_rc_t h = {.kind = (uint8_t) kind,.a = a,.b = b,.root = root };
    return post_rc(st, c, to, &h, pkt, len, 0);
}

/* ---- co-roots' plan (ibmc_mcast_coroot.h) ---- */

static ibmc_mcast_plan_t plan_of(const MPIDI_IBMC_mcast_chan_t * c, int root)
{
    return ibmc_mcast_plan(c->size, c->subgroup, root);
}

static int is_coroot(const MPIDI_IBMC_mcast_chan_t * c, int root)
{
    ibmc_mcast_plan_t p = plan_of(c, root);
    return c->relay_ring && root >= 0 && ibmc_mcast_plan_is_coroot(&p, c->rank);
}

/* Where this member's NAKs and ACKs for root's messages go: its co-root, or
 * the root. */
static int ack_target(const MPIDI_IBMC_mcast_chan_t * c, int root)
{
    ibmc_mcast_plan_t p = plan_of(c, root);
    return ibmc_mcast_plan_ack_to(&p, c->rank);
}

/* Positions [first, first + count) of root's message are missing here;
 * gap: a later packet of that root has come, so they were sent. */
static int send_nak(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_chan_t * c, int root,
                    uint32_t first, uint32_t count, int gap)
{
    ibmc_mcast_rc_t h = {.kind = IBMC_MCAST_RC_NAK,.flags = gap ? IBMC_MCAST_RC_F_GAP : 0,
        .a = first,.b = count,.root = root
    };
    MPIDI_IBMC_pvars.mcast_naks_sent++;
    return post_rc(st, c, ack_target(c, root), &h, NULL, 0, 0);
}

/* A packet of root's message sent again over RC, in answer to a NAK: the
 * copy is marked as a retransmission, the kept packet stays as sent. */
static int send_again(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_chan_t * c, int to, int root,
                      const void *pkt, size_t len)
{
    ibmc_mcast_rc_t h = {.kind = IBMC_MCAST_RC_DATA,.root = root };
    MPIDI_IBMC_pvars.mcast_retransmits++;
    return post_rc(st, c, to, &h, pkt, len, IBMC_MCAST_F_RETRANSMIT);
}

/* An ACK of pos to member `to`.  It goes as an RDMA write of this member's
 * word on `to`'s board when `to` has one and the connection can take the
 * write now: connected, nothing queued ahead (so that a queued RC ACK does
 * not arrive after a newer written one; the root would only count it as
 * old) and room in the send queue.
 * Otherwise it is an RC message.  An ACK that says what the last one to
 * `to` said is not sent again, except as the answer to an ACK_REQ
 * (`asked`): the asker may have seen a late write of an earlier channel
 * cover this member's word (read_board).  Not resending also means that a
 * member's final ACK at MPI_Comm_free is not written a second time after
 * the root has seen it and let its board go to another channel. */
static int send_ack(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_chan_t * c, int to, uint32_t pos,
                    int asked)
{
    MPIDI_IBMC_conn_t *conn = &st->conns[c->world[to]];
    if (!asked && c->said[to] == pos)
        return MPI_SUCCESS;
    c->said[to] = pos;
    MPIDI_IBMC_pvars.mcast_acks_sent++;
    if (MPIR_CVAR_IBMC_MCAST_RDMA_ACKS && c->peer_board[to] && conn->qp &&
        conn->cm.state == IBMC_CM_CONNECTED && !conn->q_head && !conn->need_rtu &&
        conn->sq_inflight < st->sq_depth && st->hca.rc_max_inline >= sizeof(uint64_t)) {
        /* inline: the word is copied when posted, so it may live here */
        uint64_t word = ibmc_mcast_board_word(c->epoch, pos);
        struct ibv_sge sge = {.addr = (uintptr_t) & word,.length = sizeof(word),.lkey = 0 };
        struct ibv_send_wr wr, *bad;
        memset(&wr, 0, sizeof(wr));
        wr.wr_id = IBMC_WR_ID(IBMC_WR_RC_SEND, IBMC_WR_INLINE_WRITE_INDEX(st, conn->rank));
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
        wr.wr.rdma.remote_addr = c->peer_board[to] + (uint64_t) c->rank * sizeof(uint64_t);
        wr.wr.rdma.rkey = c->peer_rkey[to];
        int rc = ibv_post_send(conn->qp, &wr, &bad);
        if (rc)
            return MPIDI_IBMC_VERBS_ERROR("ibv_post_send(multicast ACK write)", rc);
        conn->sq_inflight++;
        MPIDI_IBMC_pvars.mcast_acks_written++;
        if (c->state == IBMC_MCAST_CHAN_READY && conn->sq_inflight < st->sq_depth &&
            ibmc_mcast_faults_late_ack(&st->mcast->faults)) {
            /* the testing knob: a late write of the previous epoch over it */
            word = ibmc_mcast_board_word(c->epoch - 1, pos);
            rc = ibv_post_send(conn->qp, &wr, &bad);
            if (rc)
                return MPIDI_IBMC_VERBS_ERROR("ibv_post_send(multicast ACK write)", rc);
            conn->sq_inflight++;
        }
        return MPI_SUCCESS;
    }
    return send_rc(st, c, to, IBMC_MCAST_RC_ACK, pos, 0, -1, NULL, 0);
}

/* ---- co-roots: relaying and aggregated ACKs ---- */

/* Pass a packet of root's message on to the co-roots below this head. */
static int relay_on(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_chan_t * c, int root,
                    const void *pkt, size_t len)
{
    int mpi_errno = MPI_SUCCESS;
    ibmc_mcast_plan_t p = plan_of(c, root);
    int k = ibmc_mcast_plan_children(&p, c->rank, c->kids, c->size);
    for (int i = 0; i < k; i++) {
        mpi_errno = send_rc(st, c, c->kids[i], IBMC_MCAST_RC_RELAY, 0, 0, root, pkt, len);
        MPIR_ERR_CHECK(mpi_errno);
        MPIDI_IBMC_pvars.mcast_relays++;
    }
  fn_fail:
    return mpi_errno;
}

/* This co-root's aggregated ACK to root, if one is due
 * (ibmc_mcast_relay_due).  With ask_laggards (the root asked, ACK_REQ) the
 * leaves that hold the aggregate back are asked in turn, so that a dead
 * leaf is named by its failed RC connection rather than stalling the root. */
static int coroot_report(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_chan_t * c, int root,
                         int ask_laggards)
{
    int mpi_errno = MPI_SUCCESS;
    if (!is_coroot(c, root))
        return MPI_SUCCESS;
    ibmc_mcast_plan_t p = plan_of(c, root);
    int nlag = 0;
    uint32_t agg = ibmc_mcast_relay_aggregate(&c->relay, &p, c->rx.next, c->rx.released,
                                              c->laggards, c->size, &nlag);
    /* asked, it goes even if it did not move: the root may have lost the
     * last one to a late write on its board (read_board) */
    if (ask_laggards ||
        ibmc_mcast_relay_due(&c->relay, root, agg, (uint32_t) MPIR_CVAR_IBMC_MCAST_ACK_EVERY)) {
        int fresh = ask_laggards || c->said[root] != agg;
        mpi_errno = send_ack(st, c, root, agg, ask_laggards);
        MPIR_ERR_CHECK(mpi_errno);
        ibmc_mcast_relay_sent(&c->relay, root, agg, c->rx.next);
        if (fresh)
            MPIDI_IBMC_pvars.mcast_coroot_acks++;
    }
    for (int i = 0; ask_laggards && i < nlag; i++) {
        mpi_errno = send_rc(st, c, c->laggards[i], IBMC_MCAST_RC_ACK_REQ, agg, 0, -1, NULL, 0);
        MPIR_ERR_CHECK(mpi_errno);
        MPIDI_IBMC_pvars.mcast_ack_probes++;
    }
  fn_fail:
    return mpi_errno;
}

/* After a leaf's ACK: the aggregates of the roots this co-root is serving
 * now, the posted message's and the one it relays for; a retiring channel
 * reports to every root it was a co-root of. */
static int coroot_leaf_moved(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_chan_t * c)
{
    int mpi_errno = MPI_SUCCESS;
    if (c->state == IBMC_MCAST_CHAN_RETIRING) {
        for (int r = 0; r < c->size; r++)
            if (c->headed[r]) {
                mpi_errno = coroot_report(st, c, r, 0);
                MPIR_ERR_CHECK(mpi_errno);
            }
        goto fn_exit;
    }
    mpi_errno = coroot_report(st, c, c->rx.ack_root, 0);
    MPIR_ERR_CHECK(mpi_errno);
    if (c->relay_root != c->rx.ack_root)
        mpi_errno = coroot_report(st, c, c->relay_root, 0);
  fn_exit:
  fn_fail:
    return mpi_errno;
}

/* Every leaf this co-root served has delivered all this process has: the
 * retiring channel no longer needs its relay ring. */
static int coroot_settled(const MPIDI_IBMC_mcast_chan_t * c)
{
    if (!c->relay_ring)
        return 1;
    for (int r = 0; r < c->size; r++) {
        ibmc_mcast_plan_t p = plan_of(c, r);
        if (c->headed[r] &&
            ibmc_mcast_relay_aggregate(&c->relay, &p, c->rx.next, c->rx.released, NULL, 0,
                                       NULL) != c->rx.next)
            return 0;
    }
    return 1;
}

/* After a packet reached the protocol: NAK new gaps, acknowledge if due. */
static int after_packet(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_chan_t * c)
{
    int mpi_errno = MPI_SUCCESS;
    ibmc_mcast_range_t r[IBMC_MCAST_NAK_RANGES];
    /* a co-root gets every packet by relay: a gap is a relay on its way */
    if (c->rx.posted && !is_coroot(c, c->rx.root)) {
        int n = ibmc_mcast_rx_missing(&c->rx, 0, r, IBMC_MCAST_NAK_RANGES);
        for (int i = 0; i < n; i++) {
            mpi_errno = send_nak(st, c, c->rx.root, r[i].first, r[i].count, 1);
            MPIR_ERR_CHECK(mpi_errno);
        }
        /* the answer takes a round trip: the NAK timeout starts again */
        if (n) {
            c->nak_sent_at = MPIDI_IBMC_now();
            if (!c->nak_first_at)
                c->nak_first_at = c->nak_sent_at;
        }
    }
    if (ibmc_mcast_rx_ack_due(&c->rx) && c->rx.ack_root >= 0 && c->rx.ack_root != c->rank) {
        int root = c->rx.ack_root;
        uint32_t pos = ibmc_mcast_rx_ack_take(&c->rx);
        if (is_coroot(c, root)) {
            /* a co-root's ACK speaks for its leaves: it goes as they catch up */
            c->relay.owed[root] = 1;
            mpi_errno = coroot_report(st, c, root, 0);
        } else {
            mpi_errno = send_ack(st, c, ack_target(c, root), pos, 0);
        }
        MPIR_ERR_CHECK(mpi_errno);
    }
  fn_fail:
    return mpi_errno;
}

/* A packet of src's message, by multicast or (via_rc) in answer to a NAK;
 * a co-root keeps a copy of each new one and relays it on. */
static int deliver(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_chan_t * c, const void *pkt,
                   size_t len, int src, int via_rc)
{
    int mpi_errno = MPI_SUCCESS;
    ibmc_mcast_rx_verdict_t v = ibmc_mcast_rx_packet(&c->rx, pkt, len, src);
    if ((v == IBMC_MCAST_RX_DELIVERED || v == IBMC_MCAST_RX_HELD) && is_coroot(c, src)) {
        const void *kept = ibmc_mcast_relay_keep(&c->relay, pkt, len, src);
        ibmc_mcast_hdr_t h;
        memcpy(&h, kept, sizeof(h));
        c->headed[src] = 1;
        c->relay_root = src;
        mpi_errno = relay_on(st, c, src, kept, len);
        MPIR_ERR_CHECK(mpi_errno);
        /* leaves that asked for it before it came */
        int n = ibmc_mcast_relay_waiters(&c->relay, h.seq, c->kids, c->size);
        for (int i = 0; i < n; i++) {
            mpi_errno = send_again(st, c, c->kids[i], src, kept, len);
            MPIR_ERR_CHECK(mpi_errno);
        }
    }
    if (via_rc && c->nak_sent_at > 0) {
        /* The NAK timeout learns from its answers.  Each one times a round
         * trip (from the last NAK: close enough), and the timeout stays above
         * two of them; a retransmission that finds the packet already there
         * came from a NAK sent too early (multicast was merely slow), and
         * doubles it; one that fills a gap was needed, and lets it shrink. */
        double sample = MPIDI_IBMC_now() - c->nak_sent_at;
        c->srtt = c->srtt > 0 ? 0.875 * c->srtt + 0.125 * sample : sample;
        double floor = MPL_MAX(MPIR_CVAR_IBMC_MCAST_NAK_TIMEOUT * 1e-6, 2 * c->srtt);
        if (v == IBMC_MCAST_RX_DUPLICATE)
            c->nak_timeout = MPL_MIN(2 * c->nak_timeout, IBMC_MCAST_NAK_MAX_US * 1e-6);
        else if (v == IBMC_MCAST_RX_DELIVERED)
            c->nak_timeout = MPL_MAX(floor, 0.75 * c->nak_timeout);
    }
    switch (v) {
        case IBMC_MCAST_RX_DELIVERED:
        case IBMC_MCAST_RX_HELD:
            break;
        case IBMC_MCAST_RX_DUPLICATE:
            MPIDI_IBMC_pvars.mcast_duplicates++;
            break;
        case IBMC_MCAST_RX_MISMATCH:
            c->mismatch = 1;
            break;
        default:
            MPIDI_IBMC_pvars.mcast_dropped++;
            break;
    }
    mpi_errno = after_packet(st, c);
  fn_fail:
    return mpi_errno;
}

/* A multicast receive buffer: find its channel and sender, then deliver. */
/* A routing probe: believed only if it is this job's, of a channel being
 * probed, and sent from the multicast QP and address of the channel's rank
 * 0; then acknowledged to rank 0 over RC, once.  Copies that come after the
 * channel is in use are ignored. */
static int handle_probe(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_chan_t * c,
                        const ibmc_mcast_hdr_t * h, uint32_t src_qp, const union ibv_gid *sgid)
{
    if (c->state == IBMC_MCAST_CHAN_READY && h->job_key == st->job_key)
        return MPI_SUCCESS;
    if (c->state != IBMC_MCAST_CHAN_PROBING || c->rank == 0 || h->magic != IBMC_MCAST_MAGIC ||
        h->version != IBMC_MCAST_VERSION || h->job_key != st->job_key || h->payload_len ||
        c->qpn[0] != src_qp || (sgid && memcmp(sgid->raw, st->cards[c->world[0]].gid, 16))) {
        MPIDI_IBMC_pvars.mcast_dropped++;
        return MPI_SUCCESS;
    }
    if (c->probe_seen)
        return MPI_SUCCESS;
    c->probe_seen = 1;
    return send_rc(st, c, 0, IBMC_MCAST_RC_PROBE_ACK, 0, 0, -1, NULL, 0);
}

static int handle_mcast(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc, int idx, uint32_t len,
                        uint32_t src_qp, const union ibv_gid *sgid)
{
    const char *buf = mc->rbufs + (size_t) idx * mc->rbuf_sz;
    ibmc_mcast_hdr_t h;
    if (len < IBMC_GRH_BYTES + sizeof(h)) {
        MPIDI_IBMC_pvars.mcast_dropped++;
        return MPI_SUCCESS;
    }
    memcpy(&h, buf + IBMC_GRH_BYTES, sizeof(h));
    MPIDI_IBMC_mcast_chan_t *c = find_chan(mc, h.context_id, h.epoch);
    if (c && h.type == IBMC_MCAST_PROBE)
        return handle_probe(st, c, &h, src_qp, sgid);
    if (!c || c->state != IBMC_MCAST_CHAN_READY) {
        MPIDI_IBMC_pvars.mcast_dropped++;
        return MPI_SUCCESS;
    }
    /* the source is the completion's queue pair and GID, never the header;
     * nearly every packet is the posted message's root's: try it first */
    int src = c->rx.posted && c->qpn[c->rx.root] == src_qp ? c->rx.root : rank_of_qpn(c, src_qp);
    if (src >= 0 && sgid && memcmp(sgid->raw, st->cards[c->world[src]].gid, 16))
        src = -1;
    return deliver(st, c, buf + IBMC_GRH_BYTES, len - IBMC_GRH_BYTES, src, 0);
}

/* The sender's GID from the 40 bytes in front of a UD payload: a GRH
 * (InfiniBand, RoCE v1) or, for RoCE v2 over IPv4, 20 unused bytes and the
 * IPv4 header, whose source address maps to a GID. */
static int grh_source(const char *b, union ibv_gid *gid)
{
    const unsigned char *u = (const unsigned char *) b;
    if ((u[20] >> 4) == 4 && (u[20] & 0xf) == 5) {
        memset(gid, 0, sizeof(*gid));
        gid->raw[10] = gid->raw[11] = 0xff;
        memcpy(gid->raw + 12, u + 20 + 12, 4);
        return 0;
    }
    if ((u[0] >> 4) == 6) {
        memcpy(gid->raw, u + 8, 16);
        return 0;
    }
    return -1;
}

/* One multicast receive completion through the fault injector. */
static int recv_completion(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc,
                           const struct ibv_wc *wc)
{
    int mpi_errno = MPI_SUCCESS;
    int idx = (int) wc->wr_id;
    union ibv_gid sgid;
    const union ibv_gid *pgid = NULL;
    if (wc->status == IBV_WC_SUCCESS && (wc->wc_flags & IBV_WC_GRH) &&
        !grh_source(mc->rbufs + (size_t) idx * mc->rbuf_sz, &sgid))
        pgid = &sgid;
    /* a flushed receive: the QP is in the error state and would flush every
     * buffer posted again, so the poll would spin; fatal, as every failed
     * completion (ibmc_err.h) */
    if (wc->status == IBV_WC_WR_FLUSH_ERR)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_FATAL, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**ibmc_verbs", "**ibmc_verbs %s %s",
                                    "a multicast receive", ibv_wc_status_str(wc->status));
    /* another failed receive (a packet the device could not take), or this
     * process's own packet looped back (its QP number on its own GID: other
     * hosts reuse QP numbers) */
    if (wc->status != IBV_WC_SUCCESS || (wc->src_qp == mc->qp->qp_num &&
                                         (!pgid || !memcmp(pgid->raw, st->hca.gid.raw, 16)))) {
        return post_recv(mc, idx) ? MPIDI_IBMC_VERBS_ERROR("ibv_post_recv(multicast)", EIO) :
            MPI_SUCCESS;
    }
    MPIDI_IBMC_pvars.mcast_pkts_recvd++;
    /* the fault injector may hold a buffer back: keep what its completion said */
    ibmc_mcast_rmeta_t *m = &mc->rmeta[idx];
    m->len = wc->byte_len;
    m->src_qp = wc->src_qp;
    m->has_gid = pgid != NULL;
    if (pgid)
        m->sgid = sgid;

    ibmc_mcast_fault_out_t out[3];
    int n = ibmc_mcast_faults_filter(&mc->faults, (void *) (intptr_t) (idx + 1), out);
    for (int i = 0; i < n; i++) {
        int j = (int) (intptr_t) out[i].item - 1;
        if (out[i].deliver) {
            const ibmc_mcast_rmeta_t *mj = &mc->rmeta[j];
            mpi_errno = handle_mcast(st, mc, j, mj->len, mj->src_qp, mj->has_gid ? &mj->sgid : NULL);
            MPIR_ERR_CHECK(mpi_errno);
        } else {
            MPIDI_IBMC_pvars.mcast_faults++;
        }
        if (out[i].release && post_recv(mc, j)) {
            mpi_errno = MPIDI_IBMC_VERBS_ERROR("ibv_post_recv(multicast)", EIO);
            goto fn_fail;
        }
    }
  fn_fail:
    return mpi_errno;
}

/* Member `from` says it has delivered every position below pos, by RC
 * message or on this process's board: to this process as a root, from a
 * member of its subgroup or a co-root; and as a co-root, from a leaf (the
 * same position serves both: ACKs count the communicator's stream).  A
 * writer's ACKs to one process are always of one kind, its own position or
 * its subgroup's: a co-root of this process's messages is never in this
 * process's subgroup for another root, because every plan counts subgroups
 * from its root (ibmc_mcast_coroot.h). */
static int ack_in(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_chan_t * c, int from, uint32_t pos)
{
    int mpi_errno = MPI_SUCCESS;
    if (!c->ackers || c->ackers[from])
        ibmc_mcast_tx_ack(&c->tx, from, pos);
    if (c->relay_ring && ibmc_mcast_relay_leaf_ack(&c->relay, from, pos) > 0)
        mpi_errno = coroot_leaf_moved(st, c);
    return mpi_errno;
}

/* Whether anything here waits on this process's board: its own packets
 * that not every member has acknowledged, a co-root's leaves, or a retiring
 * channel's last ACKs.  An idle channel's words wait unread: ACKs are
 * cumulative, so reading one later loses nothing, and a process with many
 * channels does not scan all their boards on every progress call. */
static int board_wanted(const MPIDI_IBMC_mcast_chan_t * c)
{
    if (!c->board_mem)
        return 0;
    if (c->state == IBMC_MCAST_CHAN_RETIRING)
        return 1;
    return c->state == IBMC_MCAST_CHAN_READY &&
        (c->relay_ring || ibmc_mcast_seq_diff(c->tx.next, c->tx.min_acked) > 0);
}

/* The ACKs members wrote on this process's board since it last looked. */
static int read_board(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_chan_t * c)
{
    int mpi_errno = MPI_SUCCESS;
    for (int m = 0; m < c->size; m++) {
        uint32_t pos;
        int k = m == c->rank ? 0 : ibmc_mcast_board_take(&c->board, m, &pos);
        if (k > 0) {
            MPIDI_IBMC_pvars.mcast_acks_read++;
            mpi_errno = ack_in(st, c, m, pos);
        } else if (k < 0) {
            /* a member of an earlier channel on this board wrote late, maybe
             * over this member's ACK: ask it again */
            MPIDI_IBMC_pvars.mcast_dropped++;
            MPIDI_IBMC_pvars.mcast_acks_foreign++;
            mpi_errno = send_rc(st, c, m, IBMC_MCAST_RC_ACK_REQ, c->tx.min_acked, 0, -1, NULL, 0);
        }
        MPIR_ERR_CHECK(mpi_errno);
    }
  fn_fail:
    return mpi_errno;
}

static void chan_release(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc,
                         MPIDI_IBMC_mcast_chan_t * c);

/* rdma_cm events: joins completing or failing.  An event's context is the
 * number of the join it answers, never a pointer: a group may have been
 * left, and joined again, before its join's answer comes. */
static void drain_cm_events(MPIDI_IBMC_mcast_t * mc)
{
    struct rdma_cm_event *ev;
    while (mc->evch && rdma_get_cm_event(mc->evch, &ev) == 0) {
        MPIDI_IBMC_mcast_group_t *g = NULL;
        uintptr_t join_id = (uintptr_t) ev->param.ud.private_data;
        for (int k = 0; k < mc->pool.cap; k++)
            if (mc->groups[k].joined && mc->groups[k].join_id == join_id)
                g = &mc->groups[k];
        if (g && g->join_state == 0) {
            if (ev->event == RDMA_CM_EVENT_MULTICAST_JOIN) {
                g->join_state = 1;
                g->mgid = ev->param.ud.ah_attr.grh.dgid;
                g->mlid = ev->param.ud.ah_attr.dlid;
                g->qkey = ev->param.ud.qkey;
                struct ibv_ah_attr ah = ev->param.ud.ah_attr;
                g->ah = ibv_create_ah(mc->qp->pd, &ah);
                if (!g->ah) {
                    g->join_state = -1;
                    snprintf(g->why, sizeof(g->why), "ibv_create_ah for the group failed");
                }
            } else {
                g->join_state = -1;
                snprintf(g->why, sizeof(g->why), "joining multicast group %s: %s (status %d)",
                         inet_ntoa(g->maddr.sin_addr), rdma_event_str(ev->event), ev->status);
            }
            mc->joins_pending--;
        }
        rdma_ack_cm_event(ev);
    }
}

static int send_completion(MPIDI_IBMC_mcast_t * mc, const struct ibv_wc *wc)
{
    mc->sq_inflight--;
    /* fatal, as every failed completion (ibmc_err.h): the QP is in error
     * and every later multicast of every communicator would be lost */
    if (wc->status != IBV_WC_SUCCESS)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_FATAL, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**ibmc_verbs", "**ibmc_verbs %s %s",
                                    "a multicast send", ibv_wc_status_str(wc->status));
    return MPI_SUCCESS;
}

int MPIDI_IBMC_mcast_poll(MPIDI_IBMC_state_t * st, int *found)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_IBMC_mcast_t *mc = st->mcast;
    struct ibv_wc wc[IBMC_MCAST_POLL];
    *found = 0;
    if (!mc || mc->state != 1)
        return MPI_SUCCESS;
    if (mc->joins_pending)
        drain_cm_events(mc);
    int n = ibv_poll_cq(mc->cq, IBMC_MCAST_POLL, wc);
    if (n < 0)
        return MPIDI_IBMC_VERBS_ERROR("ibv_poll_cq(multicast)", EIO);
    *found = n;
    for (int i = 0; i < n; i++) {
        if (wc[i].opcode & IBV_WC_RECV)
            mpi_errno = recv_completion(st, mc, &wc[i]);
        else
            mpi_errno = send_completion(mc, &wc[i]);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (n == 0) {
        /* nothing more came: a packet the injector held back goes now */
        ibmc_mcast_fault_out_t out[1];
        if (ibmc_mcast_faults_flush(&mc->faults, out)) {
            int j = (int) (intptr_t) out[0].item - 1;
            const ibmc_mcast_rmeta_t *m = &mc->rmeta[j];
            mpi_errno = handle_mcast(st, mc, j, m->len, m->src_qp, m->has_gid ? &m->sgid : NULL);
            MPIR_ERR_CHECK(mpi_errno);
            if (post_recv(mc, j))
                return MPIDI_IBMC_VERBS_ERROR("ibv_post_recv(multicast)", EIO);
        }
    }
    /* ACKs written on the boards; retired channels go once every member has
     * all their packets */
    for (MPIDI_IBMC_mcast_chan_t * c = mc->chans, *next; c; c = next) {
        next = c->next;
        if (board_wanted(c)) {
            mpi_errno = read_board(st, c);
            MPIR_ERR_CHECK(mpi_errno);
        }
        if (c->state == IBMC_MCAST_CHAN_RETIRING &&
            ((ibmc_mcast_seq_diff(c->tx.min_acked, c->tx.next) >= 0 && coroot_settled(c)) ||
             MPIDI_IBMC_now() > c->retire_deadline))
            chan_release(st, mc, c);
    }
  fn_fail:
    return mpi_errno;
}

int MPIDI_IBMC_mcast_recv_rc(MPIDI_IBMC_state_t * st, int src, const char *payload, size_t plen)
{
    int mpi_errno = MPI_SUCCESS;
    ibmc_mcast_rc_t h;
    MPIDI_IBMC_mcast_t *mc = st->mcast;
    if (plen < sizeof(h) || !mc || mc->state != 1) {
        MPIDI_IBMC_pvars.mcast_dropped++;
        return MPI_SUCCESS;
    }
    memcpy(&h, payload, sizeof(h));
    MPIDI_IBMC_mcast_chan_t *c = find_chan(mc, h.context_id, h.epoch);
    int from = c ? rank_of_world(c, src) : -1;
    if (from < 0) {
        /* a freed communicator's, or from a process outside it */
        MPIDI_IBMC_pvars.mcast_dropped++;
        return MPI_SUCCESS;
    }
    switch (h.kind) {
        case IBMC_MCAST_RC_ACK:
            mpi_errno = ack_in(st, c, from, h.a);
            MPIR_ERR_CHECK(mpi_errno);
            break;
        case IBMC_MCAST_RC_NAK:{
                /* from this process's ring if the message was its own, else
                 * from what it kept as a co-root */
                uint32_t count = MPL_MIN(h.b, c->tx.window);
                for (uint32_t i = 0; i < count; i++) {
                    const void *pkt;
                    size_t len;
                    int root = c->rank;
                    if (h.root == c->rank) {
                        if (!ibmc_mcast_tx_lookup(&c->tx, h.a + i, &pkt, &len))
                            continue;
                    } else if (!c->relay_ring) {
                        continue;
                    } else if (!ibmc_mcast_relay_lookup(&c->relay, h.a + i, &pkt, &len, &root)) {
                        /* not here yet: a gap's packet was sent, so it is on
                         * its way by relay; a timed-out leaf may be asking
                         * for one its root has not sent, which multicast
                         * will bring */
                        if (h.flags & IBMC_MCAST_RC_F_GAP)
                            ibmc_mcast_relay_wait(&c->relay, from, h.a + i);
                        continue;
                    }
                    mpi_errno = send_again(st, c, from, root, pkt, len);
                    MPIR_ERR_CHECK(mpi_errno);
                }
                break;
            }
        case IBMC_MCAST_RC_ACK_REQ:{
                /* an ACK states how far this member has delivered, which is
                 * true whoever asks; the asker is a member (checked above).  A
                 * co-root answers a root for its whole subgroup.  A retiring
                 * member answers too: its last ACK may have been covered on the
                 * asker's board. */
                int live = c->state == IBMC_MCAST_CHAN_READY ||
                    c->state == IBMC_MCAST_CHAN_RETIRING;
                if (live && is_coroot(c, from)) {
                    c->relay.owed[from] = 1;
                    mpi_errno = coroot_report(st, c, from, 1);
                    MPIR_ERR_CHECK(mpi_errno);
                } else if (live) {
                    /* not taken from the skewed schedule: the asker need not be
                     * where this member's next due ACK goes */
                    mpi_errno = send_ack(st, c, from, c->rx.next, 1);
                    MPIR_ERR_CHECK(mpi_errno);
                } else {
                    MPIDI_IBMC_pvars.mcast_dropped++;
                }
                break;
            }
        case IBMC_MCAST_RC_PROBE_ACK:
            if (c->state == IBMC_MCAST_CHAN_PROBING && c->rank == 0 && from > 0 &&
                !c->probe_acked[from]) {
                c->probe_acked[from] = 1;
                c->probe_acks++;
            } else {
                MPIDI_IBMC_pvars.mcast_dropped++;
            }
            break;
        case IBMC_MCAST_RC_DATA:
        case IBMC_MCAST_RC_RELAY:{
                /* the root it names is believed only if the plan lets this
                 * sender pass that root's packets to this process */
                ibmc_mcast_plan_t p = plan_of(c, h.root);
                if (h.root < 0 || h.root >= c->size || !ibmc_mcast_plan_may_send(&p, from, c->rank)) {
                    MPIDI_IBMC_pvars.mcast_dropped++;
                    break;
                }
                if (c->state == IBMC_MCAST_CHAN_READY) {
                    mpi_errno = deliver(st, c, payload + sizeof(h), plen - sizeof(h), h.root,
                                        h.kind == IBMC_MCAST_RC_DATA);
                    MPIR_ERR_CHECK(mpi_errno);
                }
                break;
            }
        default:
            MPIDI_IBMC_pvars.mcast_dropped++;
            break;
    }
  fn_fail:
    return mpi_errno;
}

/* One turn of a wait inside MPI_Bcast: progress everything, with the
 * netmod's lock released and, in a build with the global critical section,
 * that section yielded, so that other threads' operations (another
 * communicator's broadcast among them) move too. */
static int wait_turn(void)
{
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    int mpi_errno = MPID_Progress_test(NULL);
    MPID_THREAD_CS_YIELD(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    return mpi_errno;
}

/* ---- setting a communicator up ---- */

/* A broadcast that asked for the channel runs binomial: counted every time,
 * printed with MPIR_CVAR_IBMC_STATS the first time for this reason (*told). */
static void fallback_note(MPIR_Comm * comm, const char *why, int *told)
{
    MPIDI_IBMC_pvars.mcast_fallbacks++;
    if (MPIR_CVAR_IBMC_STATS && comm->rank == 0 && !(told && *told)) {
        MPIDI_IBMC_state_t *st = MPIDI_IBMC_STATE();
        printf("ibmc-stats: rank %d ibmc_mcast falls back to binomial on communicator %#x "
               "(size %d): %s\n", st ? st->my_rank : -1, (unsigned) comm->context_id,
               comm->local_size, why);
        fflush(stdout);
        if (told)
            *told = 1;
    }
}

static void chan_free_memory(MPIDI_IBMC_mcast_chan_t * c)
{
    /* the board stays registered for the next channel (MPIDI_IBMC_mcast_boardmem_t) */
    if (c->board_mem)
        c->board_mem->in_use = 0;
    MPL_free(c->board_seen);
    MPL_free(c->peer_board);
    MPL_free(c->peer_rkey);
    MPL_free(c->said);
    if (c->ring_mr)
        ibv_dereg_mr(c->ring_mr);
    MPL_free(c->ring);
    MPL_free(c->acked);
    MPL_free(c->slots);
    MPL_free(c->slot_mem);
    MPL_free(c->world);
    MPL_free(c->qpn);
    MPL_free(c->roots);
    MPL_free(c->probe_acked);
    MPL_free(c->laggards);
    MPL_free(c->ackers);
    MPL_free(c->kids);
    MPL_free(c->relay_ring);
    MPL_free(c->relay_ring_root);
    MPL_free(c->leaf_acked);
    MPL_free(c->agg_sent);
    MPL_free(c->owed);
    MPL_free(c->headed);
    MPL_free(c);
}

/* Leave the group and free everything; unlinks c from the engine. */
static void chan_release(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc,
                         MPIDI_IBMC_mcast_chan_t * c)
{
    if (MPIR_CVAR_IBMC_STATS && c->state != IBMC_MCAST_CHAN_FAILED) {
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
        if (*p == c) {
            *p = c->next;
            break;
        }
    /* the group stays joined for the next communicator (ibmc_mcast_pool.h) */
    if (c->group >= 0)
        ibmc_mcast_pool_unref(&mc->pool, c->group);
    chan_free_memory(c);
}

/* Leave group k (at MPI_Finalize, or after a failed join so that a later
 * communicator may try again). */
static void group_leave(MPIDI_IBMC_mcast_t * mc, int k)
{
    MPIDI_IBMC_mcast_group_t *g = &mc->groups[k];
    if (g->attached)
        ibv_detach_mcast(mc->qp, &g->mgid, g->mlid);
    if (g->ah)
        ibv_destroy_ah(g->ah);
    if (g->joined) {
        if (g->join_state == 0)
            mc->joins_pending--;
        rdma_leave_multicast(mc->id, (struct sockaddr *) &g->maddr);
        if (g->join_state == 1)
            MPIDI_IBMC_pvars.mcast_groups--;
    }
    memset(g, 0, sizeof(*g));
}

/* The address of the job's group k: 239.x.y.z, x.y.z from the job key and
 * k.  Another job's groups differ; if two ever coincide, each job drops the
 * other's packets as foreign (the job key in every header). */
static void group_address(MPIDI_IBMC_state_t * st, int k, struct sockaddr_in *sin)
{
    uint64_t h = st->job_key ^ ((uint64_t) k << 40);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 32;
    memset(sin, 0, sizeof(*sin));
    sin->sin_family = AF_INET;
    sin->sin_addr.s_addr = htonl(0xef000000u | (uint32_t) (h & 0xffffff));
}

/* Make this process a member of group k, joining it if it is not yet;
 * returns 0, or -1 with why. */
static int group_join(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc, int k, char *why,
                      size_t whylen)
{
    MPIDI_IBMC_mcast_group_t *g = &mc->groups[k];
    if (g->attached)
        return 0;
    if (!g->joined) {
        group_address(st, k, &g->maddr);
        g->join_id = ++mc->joins;
        if (rdma_join_multicast(mc->id, (struct sockaddr *) &g->maddr, (void *) g->join_id)) {
            char ebuf[96];
            snprintf(why, whylen, "rdma_join_multicast(%s) failed: %s",
                     inet_ntoa(g->maddr.sin_addr), MPIR_Strerror(errno, ebuf, sizeof(ebuf)));
            memset(g, 0, sizeof(*g));
            return -1;
        }
        g->joined = 1;
        mc->joins_pending++;
    }
    double deadline = MPIDI_IBMC_now() + MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT;
    while (g->join_state == 0) {
        drain_cm_events(mc);
        if (g->join_state)
            break;
        if (MPIDI_IBMC_now() > deadline) {
            snprintf(why, whylen, "joining multicast group %s took more than %d s "
                     "(MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT)", inet_ntoa(g->maddr.sin_addr),
                     MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT);
            group_leave(mc, k);
            return -1;
        }
        wait_turn();
    }
    if (g->join_state < 0) {
        snprintf(why, whylen, "%s", g->why);
        group_leave(mc, k);
        return -1;
    }
    MPIDI_IBMC_pvars.mcast_groups++;
    if (g->qkey != RDMA_UDP_QKEY) {
        snprintf(why, whylen, "the group's Q_Key is %#x, not rdma_cm's %#x", g->qkey,
                 RDMA_UDP_QKEY);
        group_leave(mc, k);
        return -1;
    }
    int rc = ibv_attach_mcast(mc->qp, &g->mgid, g->mlid);
    if (rc) {
        char ebuf[96];
        snprintf(why, whylen, "ibv_attach_mcast failed: %s", MPIR_Strerror(rc, ebuf, sizeof(ebuf)));
        group_leave(mc, k);
        return -1;
    }
    g->attached = 1;
    return 0;
}

/* Members per co-root subgroup (MPIR_CVAR_IBMC_MCAST_SUBGROUP).  Its 0 is
 * the model's choice: the root spends T_um*log2(n/s) relaying a packet to
 * the co-roots and T_pack*s/M on the ACKs of its s - 1 leaves and its
 * co-roots, each of which acknowledges once every M packets (seed 000
 * §7.2's cost, with §4.4's delayed ACKs, which the seed says combine with
 * co-roots); the minimum, s = M*T_um/(T_pack*ln 2), is 2*M with the
 * published InfiniBand parameters (bench/model.py coroots).  No M (ACKs
 * only when asked) leaves no ACK load to share: no co-roots. */
static int subgroup_size(int size)
{
    int s = MPIR_CVAR_IBMC_MCAST_SUBGROUP, m = MPIR_CVAR_IBMC_MCAST_ACK_EVERY;
    if (s == 0)
        s = m ? 2 * m : size;
    return MPL_MIN(s, size);
}

static int chan_alloc(MPIDI_IBMC_mcast_t * mc, MPIDI_IBMC_mcast_chan_t * c, MPIR_Comm * comm)
{
    uint32_t w = (uint32_t) MPIR_CVAR_IBMC_MCAST_WINDOW;
    size_t slot = sizeof(ibmc_mcast_hdr_t) + mc->payload_max;
    c->size = comm->local_size;
    c->rank = comm->rank;
    c->context_id = comm->context_id;
    c->world = MPL_calloc(c->size, sizeof(int), MPL_MEM_OTHER);
    c->qpn = MPL_calloc(c->size, sizeof(uint32_t), MPL_MEM_OTHER);
    c->roots = MPL_calloc(c->size, 1, MPL_MEM_OTHER);
    c->probe_acked = MPL_calloc(c->size, 1, MPL_MEM_OTHER);
    c->laggards = MPL_calloc(c->size, sizeof(int), MPL_MEM_OTHER);
    c->acked = MPL_calloc(c->size, sizeof(uint32_t), MPL_MEM_OTHER);
    c->slots = MPL_calloc(w, sizeof(*c->slots), MPL_MEM_OTHER);
    c->slot_mem = MPL_malloc((size_t) w * mc->payload_max, MPL_MEM_BUFFER);
    c->ring = MPL_aligned_alloc(4096, (size_t) w * slot, MPL_MEM_BUFFER);
    c->board_seen = MPL_calloc(c->size, sizeof(uint64_t), MPL_MEM_OTHER);
    c->peer_board = MPL_calloc(c->size, sizeof(uint64_t), MPL_MEM_OTHER);
    c->peer_rkey = MPL_calloc(c->size, sizeof(uint32_t), MPL_MEM_OTHER);
    c->said = MPL_calloc(c->size, sizeof(uint32_t), MPL_MEM_OTHER);
    if (!c->world || !c->qpn || !c->roots || !c->probe_acked || !c->laggards || !c->acked ||
        !c->slots || !c->slot_mem || !c->ring || !c->board_seen || !c->peer_board ||
        !c->peer_rkey || !c->said)
        return -1;
    c->subgroup = subgroup_size(c->size);
    c->relay_root = -1;
    if (c->subgroup < c->size) {
        c->ackers = MPL_calloc(c->size, 1, MPL_MEM_OTHER);
        c->kids = MPL_calloc(c->size, sizeof(int), MPL_MEM_OTHER);
        c->relay_ring = MPL_malloc((size_t) w * slot, MPL_MEM_BUFFER);
        c->relay_ring_root = MPL_calloc(w, sizeof(int), MPL_MEM_OTHER);
        c->leaf_acked = MPL_calloc(c->size, sizeof(uint32_t), MPL_MEM_OTHER);
        c->agg_sent = MPL_calloc(c->size, sizeof(uint32_t), MPL_MEM_OTHER);
        c->owed = MPL_calloc(c->size, 1, MPL_MEM_OTHER);
        c->headed = MPL_calloc(c->size, 1, MPL_MEM_OTHER);
        if (!c->ackers || !c->kids || !c->relay_ring || !c->relay_ring_root || !c->leaf_acked ||
            !c->agg_sent || !c->owed || !c->headed)
            return -1;
    }
    for (int r = 0; r < c->size; r++)
        c->world[r] = MPIDI_IBMC_AV(MPIDIU_comm_rank_to_av(comm, r)).world_rank;
    return 0;
}

/* One signaled UD send of [buf, buf+len) to group g; counted in flight. */
static int post_to_group(MPIDI_IBMC_mcast_t * mc, const MPIDI_IBMC_mcast_group_t * g,
                         const void *buf, size_t len, uint32_t lkey)
{
    struct ibv_sge sge = {.addr = (uintptr_t) buf,.length = (uint32_t) len,.lkey = lkey };
    struct ibv_send_wr wr, *bad;
    memset(&wr, 0, sizeof(wr));
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = g->ah;
    wr.wr.ud.remote_qpn = 0xffffff;     /* the multicast QPN */
    wr.wr.ud.remote_qkey = g->qkey;
    int rc = ibv_post_send(mc->qp, &wr, &bad);
    if (!rc)
        mc->sq_inflight++;
    return rc;
}

/* The routing probe, before first use (MVAPICH2's MCST_INIT handshake): rank
 * 0 multicasts a probe, again after the NAK timeout and doubling, until every
 * member has acknowledged it over RC; every other member waits for it.  A
 * join can succeed on a fabric that then does not deliver (a switch that
 * snoops IGMP with no querier, a path the subnet manager did not program);
 * the probe finds that before a broadcast does, and the members fall back
 * together.  *routed: rank 0 heard from all, or this member got the probe,
 * within MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT. */
static int probe_group(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc,
                       MPIDI_IBMC_mcast_chan_t * c, int *routed)
{
    MPIDI_IBMC_mcast_group_t *g = &mc->groups[c->group];
    double now = MPIDI_IBMC_now(), deadline = now + MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT;
    double next = now, every = c->nak_timeout;
    *routed = 0;
    for (;;) {
        if (c->rank == 0 ? c->probe_acks == c->size - 1 : c->probe_seen) {
            *routed = 1;
            return MPI_SUCCESS;
        }
        if (now > deadline)
            return MPI_SUCCESS;
        if (c->rank == 0 && now >= next && mc->sq_inflight < mc->sq_depth) {
            ibmc_mcast_hdr_t h = {.magic = IBMC_MCAST_MAGIC,.version = IBMC_MCAST_VERSION,
                .type = IBMC_MCAST_PROBE,.context_id = c->context_id,.epoch = c->epoch,
                .job_key = st->job_key
            };
            memcpy(mc->probe_pkt, &h, sizeof(h));
            int rc = post_to_group(mc, g, mc->probe_pkt, sizeof(h), mc->rmr->lkey);
            if (rc)
                return MPIDI_IBMC_VERBS_ERROR("ibv_post_send(multicast probe)", rc);
            next = now + every;
            every = MPL_MIN(2 * every, IBMC_MCAST_NAK_MAX_US * 1e-6);
        }
        int mpi_errno = wait_turn();
        if (mpi_errno)
            return mpi_errno;
        now = MPIDI_IBMC_now();
    }
}

/* A board for c's ACKs (MPIDI_IBMC_mcast_boardmem_t): a free one big enough,
 * or a new one.  Without one (no memory, or the registration failed) the
 * channel still works: members send their ACKs to this process as RC
 * messages. */
static void board_get(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc,
                      MPIDI_IBMC_mcast_chan_t * c)
{
    MPIDI_IBMC_mcast_boardmem_t *b;
    for (b = mc->boards; b; b = b->next)
        if (!b->in_use && b->cap >= c->size)
            break;
    if (!b) {
        b = MPL_calloc(1, sizeof(*b), MPL_MEM_OTHER);
        if (!b)
            return;
        b->cap = MPL_MAX(c->size, 64);
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
        MPIDI_IBMC_pvars.mcast_boards++;
    }
    b->in_use = 1;
    c->board_mem = b;
}

/* Collective: set the channel of comm up, or agree that it cannot be. */
static int cmp_int(const void *a, const void *b)
{
    return (*(const int *) a > *(const int *) b) - (*(const int *) a < *(const int *) b);
}

static int chan_setup(MPIDI_IBMC_state_t * st, MPIR_Comm * comm, MPIDI_IBMC_mcast_chan_t ** out)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    int *nodes = NULL;
    /* what every member contributes: whether it can, its QP, its epoch
     * counter, its free groups and its ACK board (address 0: none) */
    struct setup_info {
        uint32_t ok, qpn, epoch_seq, board_rkey;
        uint64_t free_groups;
        uint64_t board;
    } mine = { 0 }, *all = NULL;
    uint64_t *masks = NULL;
    int routed = 0;
    MPIDI_IBMC_mcast_t *mc = engine(st);
    MPIR_ERR_CHKANDJUMP(!mc, mpi_errno, MPI_ERR_OTHER, "**nomem");
    MPIDI_IBMC_mcast_chan_t *c = MPL_calloc(1, sizeof(*c), MPL_MEM_OTHER);
    MPIR_ERR_CHKANDJUMP(!c, mpi_errno, MPI_ERR_OTHER, "**nomem");
    c->next = mc->chans;
    mc->chans = c;
    c->state = IBMC_MCAST_CHAN_FAILED;
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
    int one_node = nodes[0] == nodes[comm->local_size - 1], shared = 0;
    for (int r = 1; r < comm->local_size; r++)
        shared |= nodes[r] == nodes[r - 1];
    if (one_node || shared) {
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
        mine.free_groups = ibmc_mcast_pool_free_mask(&mc->pool);
    all = MPL_malloc(sizeof(mine) * comm->local_size, MPL_MEM_OTHER);
    masks = MPL_malloc(sizeof(uint64_t) * comm->local_size, MPL_MEM_OTHER);
    MPIR_ERR_CHKANDJUMP(!all || !masks, mpi_errno, MPI_ERR_OTHER, "**nomem");

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
    c->epoch = epoch;
    /* cleared before any member learns where it is (the second round); a
     * late write of an earlier channel can still come, and is foreign */
    if (c->board_mem)
        ibmc_mcast_board_init(&c->board, c->board_mem->words, c->board_seen, c->size, c->epoch);
    if (can) {
        int shared;
        for (int r = 0; r < comm->local_size; r++)
            masks[r] = all[r].free_groups;
        c->group = ibmc_mcast_pool_pick(masks, comm->local_size, mc->pool.cap, c->context_id,
                                        c->epoch, &shared);
        if (group_join(st, mc, c->group, c->why, sizeof(c->why)) != 0) {
            mine.ok = 0;
            c->group = -1;
        } else {
            ibmc_mcast_pool_ref(&mc->pool, c->group);
        }
    } else if (mine.ok) {
        snprintf(c->why, sizeof(c->why), "rank %d cannot use multicast", who);
    }

    /* second round: who joined */
    if (can) {
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
            c->qpn[r] = all[r].qpn;
            c->peer_board[r] = all[r].board;
            c->peer_rkey[r] = all[r].board_rkey;
        }
    }
    if (!can)
        goto fn_exit;

    ibmc_mcast_id_t id = {.job_key = st->job_key,.context_id = c->context_id,.epoch = c->epoch };
    uint32_t w = (uint32_t) MPIR_CVAR_IBMC_MCAST_WINDOW;
    size_t slot = sizeof(ibmc_mcast_hdr_t) + mc->payload_max;
    c->ring_mr = ibv_reg_mr(st->hca.pd, c->ring, (size_t) w * slot, IBV_ACCESS_LOCAL_WRITE);
    if (!c->ring_mr) {
        /* the others have joined: an error, not a silent fallback on one rank */
        mpi_errno = MPIDI_IBMC_VERBS_ERROR("ibv_reg_mr(multicast ring)", errno);
        goto fn_fail;
    }
    ibmc_mcast_rx_init(&c->rx, id, mc->payload_max, w, (uint32_t) MPIR_CVAR_IBMC_MCAST_ACK_EVERY,
                       (uint32_t) c->rank, c->slots, c->slot_mem);
    ibmc_mcast_tx_init(&c->tx, id, mc->payload_max, w, c->size, c->rank, c->acked, c->ring);
    if (c->relay_ring) {
        ibmc_mcast_plan_t mine_as_root = plan_of(c, c->rank);
        for (int m = 0; m < c->size; m++)
            c->ackers[m] = ibmc_mcast_plan_ack_to(&mine_as_root, m) == c->rank;
        ibmc_mcast_tx_set_ackers(&c->tx, c->ackers);
        ibmc_mcast_relay_init(&c->relay, c->size, c->rank, w, mc->payload_max, c->relay_ring,
                              c->relay_ring_root, c->leaf_acked, c->agg_sent, c->owed);
    }
    c->nak_timeout = MPIR_CVAR_IBMC_MCAST_NAK_TIMEOUT * 1e-6;

    /* third round: did the probe reach everyone */
    c->state = IBMC_MCAST_CHAN_PROBING;
    mpi_errno = probe_group(st, mc, c, &routed);
    MPIR_ERR_CHECK(mpi_errno);
    mine.ok = (uint32_t) routed;
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    mpi_errno = MPIR_Allgather_intra_brucks(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine),
                                            MPI_BYTE, comm, &errflag);
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    MPIR_ERR_CHECK(mpi_errno);
    /* name a member the probe missed; rank 0 alone failing means an
     * acknowledgement came too late */
    for (int r = 1; r < comm->local_size && c->state != IBMC_MCAST_CHAN_FAILED; r++) {
        if (!all[r].ok) {
            c->state = IBMC_MCAST_CHAN_FAILED;
            snprintf(c->why, sizeof(c->why), "the group's probe did not reach rank %d within "
                     "%d s (MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT)", r,
                     MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT);
        }
    }
    if (c->state != IBMC_MCAST_CHAN_FAILED && !all[0].ok) {
        c->state = IBMC_MCAST_CHAN_FAILED;
        snprintf(c->why, sizeof(c->why), "rank 0 did not hear from every member within %d s "
                 "(MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT)", MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT);
    }
    if (c->state == IBMC_MCAST_CHAN_FAILED)
        goto fn_exit;
    c->state = IBMC_MCAST_CHAN_READY;
    /* no root sends before every member takes packets */
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    mpi_errno = MPIR_Barrier_impl(comm, &errflag);
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    MPL_free(nodes);
    MPL_free(all);
    MPL_free(masks);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* ---- the broadcast ---- */

static int root_send(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_t * mc,
                     MPIDI_IBMC_mcast_chan_t * c, int *blocked)
{
    const void *pkt;
    size_t len;
    *blocked = 0;
    while (!ibmc_mcast_tx_sent_all(&c->tx)) {
        /* no more sends in flight than the window: a ring slot is only
         * rewritten a window later, when its send has completed */
        if (mc->sq_inflight >= MPL_MIN(mc->sq_depth, (int) c->tx.window) ||
            !ibmc_mcast_tx_next(&c->tx, &pkt, &len)) {
            *blocked = 1;
            return MPI_SUCCESS;
        }
        int rc = post_to_group(mc, &mc->groups[c->group], pkt, len, c->ring_mr->lkey);
        if (rc)
            return MPIDI_IBMC_VERBS_ERROR("ibv_post_send(multicast)", rc);
        MPIDI_IBMC_pvars.mcast_pkts_sent++;
        MPIDI_IBMC_pvars.mcast_bytes_sent += len;
        if (c->relay_ring) {
            int mpi_errno = relay_on(st, c, c->rank, pkt, len);
            if (mpi_errno)
                return mpi_errno;
        }
    }
    return MPI_SUCCESS;
}

/* The root's window has been full for a while with no ACK moving it: ask
 * the members that hold it back, over RC, to acknowledge now.  The ACK
 * requests inside multicast packets may have been lost, or a member may be
 * gone: a live one answers, and a dead one fails the RC send, which ends the
 * job naming it instead of leaving the root waiting.  The wait before asking
 * starts at the NAK timeout and doubles while the members stay silent (a
 * member that is alive but outside MPI cannot answer). */
static int probe_laggards(MPIDI_IBMC_state_t * st, MPIDI_IBMC_mcast_chan_t * c,
                          uint32_t * stuck_at, double *stuck_since, double *probe_after)
{
    int mpi_errno = MPI_SUCCESS;
    double now = MPIDI_IBMC_now();
    if (!ibmc_mcast_tx_blocked(&c->tx) || c->tx.min_acked != *stuck_at || !*stuck_since) {
        *stuck_at = c->tx.min_acked;
        *stuck_since = now;
        return MPI_SUCCESS;
    }
    if (now - *stuck_since < *probe_after)
        return MPI_SUCCESS;
    /* every one of them: a dead member must be asked even when live ones
     * that stay behind are asked too */
    int n = ibmc_mcast_tx_laggards(&c->tx, c->laggards, c->size);
    for (int i = 0; i < n; i++) {
        mpi_errno = send_rc(st, c, c->laggards[i], IBMC_MCAST_RC_ACK_REQ, c->tx.min_acked, 0, -1,
                            NULL, 0);
        MPIR_ERR_CHECK(mpi_errno);
        MPIDI_IBMC_pvars.mcast_ack_probes++;
    }
    *stuck_since = now;
    *probe_after = MPL_MIN(2 * *probe_after, IBMC_MCAST_NAK_MAX_US * 1e-6);
  fn_fail:
    return mpi_errno;
}

int MPIDI_IBMC_mcast_bcast(void *buf, MPI_Aint len, int root, MPIR_Comm * comm, int *used)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_IBMC_state_t *st = MPIDI_IBMC_STATE();
    *used = 0;

    /* every test here gives every member the same answer */
    if (!MPIR_CVAR_IBMC_MCAST) {
        fallback_note(comm, "MPIR_CVAR_IBMC_MCAST is false", st ? &st->mcast_told_off : NULL);
        return MPI_SUCCESS;
    }
    if (comm->local_size < 2) {
        *used = 1;              /* nobody to send to */
        return MPI_SUCCESS;
    }
    if (!st || !st->conns) {
        fallback_note(comm, "the netmod is not up yet", NULL);
        return MPI_SUCCESS;
    }
    if (MPIR_CVAR_IBMC_MCAST_MAX_BYTES > 0 && len > MPIR_CVAR_IBMC_MCAST_MAX_BYTES) {
        fallback_note(comm, "the message is larger than MPIR_CVAR_IBMC_MCAST_MAX_BYTES",
                      &st->mcast_told_large);
        return MPI_SUCCESS;
    }
    if (len == 0) {
        *used = 1;
        return MPI_SUCCESS;
    }

    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    MPIDI_IBMC_mcast_chan_t *c = MCAST_CHAN(comm);
    if (!c) {
        mpi_errno = chan_setup(st, comm, &c);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (c->state != IBMC_MCAST_CHAN_READY) {
        /* inside one node there is nothing to fall back from: not counted */
        if (!c->single_node)
            fallback_note(comm, c->why, &c->told);
        goto fn_exit;
    }
    MPIDI_IBMC_mcast_t *mc = st->mcast;
    c->roots[root] = 1;
    if (root == c->rank) {
        uint32_t first = ibmc_mcast_rx_own(&c->rx, (uint64_t) len, c->rank);
        ibmc_mcast_tx_begin(&c->tx, first, c->rx.released, buf, (uint64_t) len);
        double probe_after = c->nak_timeout, stuck_since = 0;
        uint32_t stuck_at = 0;  /* set on the first blocked turn */
        for (;;) {
            int blocked;
            mpi_errno = root_send(st, mc, c, &blocked);
            MPIR_ERR_CHECK(mpi_errno);
            if (!blocked)
                break;
            mpi_errno = wait_turn();
            MPIR_ERR_CHECK(mpi_errno);
            mpi_errno = probe_laggards(st, c, &stuck_at, &stuck_since, &probe_after);
            MPIR_ERR_CHECK(mpi_errno);
        }
    } else {
        c->mismatch = 0;
        c->nak_first_at = 0;
        if (ibmc_mcast_rx_post(&c->rx, buf, (uint64_t) len, root) == IBMC_MCAST_RX_MISMATCH)
            c->mismatch = 1;
        mpi_errno = after_packet(st, c);
        MPIR_ERR_CHECK(mpi_errno);
        double timeout = c->nak_timeout;
        uint64_t seen = c->rx.count[IBMC_MCAST_RX_DELIVERED] + c->rx.count[IBMC_MCAST_RX_HELD];
        double quiet_since = MPIDI_IBMC_now();
        while (!ibmc_mcast_rx_complete(&c->rx) && !c->mismatch) {
            mpi_errno = wait_turn();
            MPIR_ERR_CHECK(mpi_errno);
            uint64_t now_seen = c->rx.count[IBMC_MCAST_RX_DELIVERED] +
                c->rx.count[IBMC_MCAST_RX_HELD];
            double now = MPIDI_IBMC_now();
            if (c->nak_sent_at > quiet_since)
                quiet_since = c->nak_sent_at;
            if (now_seen != seen) {
                seen = now_seen;
                quiet_since = now;
                timeout = c->nak_timeout;
            } else if (now - quiet_since > timeout && !ibmc_mcast_rx_complete(&c->rx)) {
                /* the tail is missing, or everything: ask for all of it */
                ibmc_mcast_range_t r[IBMC_MCAST_NAK_RANGES];
                int n = ibmc_mcast_rx_missing(&c->rx, 1, r, IBMC_MCAST_NAK_RANGES);
                for (int i = 0; i < n; i++) {
                    mpi_errno = send_nak(st, c, root, r[i].first, r[i].count, 0);
                    MPIR_ERR_CHECK(mpi_errno);
                }
                quiet_since = now;
                if (n) {
                    c->nak_sent_at = now;
                    if (!c->nak_first_at)
                        c->nak_first_at = now;
                }
                timeout = MPL_MIN(2 * timeout, IBMC_MCAST_NAK_MAX_US * 1e-6);
            }
        }
        if (c->mismatch) {
            MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_TRUNCATE, "**ibmc_mcast_len",
                                 "**ibmc_mcast_len %d %d", root, (int) len);
        }
        if (c->nak_first_at > 0) {
            /* recovery: from the first request for a lost packet to the
             * whole message in place */
            unsigned long long us =
                (unsigned long long) ((MPIDI_IBMC_now() - c->nak_first_at) * 1e6);
            MPIDI_IBMC_pvars.mcast_recoveries++;
            MPIDI_IBMC_pvars.mcast_recovery_us += us;
            if (us > MPIDI_IBMC_pvars.mcast_recovery_worst_us)
                MPIDI_IBMC_pvars.mcast_recovery_worst_us = us;
        }
        mpi_errno = after_packet(st, c);
        MPIR_ERR_CHECK(mpi_errno);
    }
    MPIDI_IBMC_pvars.mcast_bcasts++;
    *used = 1;

  fn_exit:
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* ---- communicator and process end ---- */

int MPIDI_IBMC_mcast_comm_free(MPIR_Comm * comm)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_IBMC_state_t *st = MPIDI_IBMC_STATE();
    MPIDI_IBMC_mcast_chan_t *c = MCAST_CHAN(comm);
    if (!c)
        return MPI_SUCCESS;
    comm->dev.ch4.netmod.ibmc.coll = NULL;
    /* after MPI_Finalize's release of every channel, c is gone */
    if (!st || !st->mcast || st->mcast->finalized)
        return MPI_SUCCESS;
    if (c->state != IBMC_MCAST_CHAN_READY) {
        chan_release(st, st->mcast, c);
        return MPI_SUCCESS;
    }
    /* Every root of this communicator hears where this process ended, so it
     * can free what it kept for NAKs; this process's own ring stays, to
     * answer NAKs, until every member has said the same (or a deadline). */
    uint32_t end = c->rx.next;
    c->state = IBMC_MCAST_CHAN_RETIRING;
    c->retire_deadline = MPIDI_IBMC_now() + IBMC_MCAST_RETIRE_SECONDS;
    for (int r = 0; r < c->size; r++) {
        if (r == c->rank || !c->roots[r])
            continue;
        if (is_coroot(c, r)) {
            /* for its subgroup, as its leaves' last ACKs come in */
            c->headed[r] = 1;
            c->relay.owed[r] = 1;
            mpi_errno = coroot_report(st, c, r, 0);
        } else {
            mpi_errno = send_ack(st, c, ack_target(c, r), end, 0);
        }
        MPIR_ERR_CHECK(mpi_errno);
    }
    /* a process that never sent anything and whose leaves, if it was a
     * co-root, have all it had, has nothing to keep */
    if (!c->roots[c->rank] && coroot_settled(c))
        chan_release(st, st->mcast, c);
  fn_fail:
    return mpi_errno;
}

void MPIDI_IBMC_mcast_finalize(MPIDI_IBMC_state_t * st)
{
    MPIDI_IBMC_mcast_t *mc = st->mcast;
    if (!mc)
        return;
    /* Retiring channels may still be asked for packets by members that are
     * finishing their last broadcast: serve them until every member has
     * acknowledged everything, or the deadline.  A channel whose
     * communicator the application never freed has no such duty. */
    for (;;) {
        int retiring = 0;
        for (MPIDI_IBMC_mcast_chan_t * c = mc->chans; c; c = c->next)
            retiring |= c->state == IBMC_MCAST_CHAN_RETIRING;
        if (!retiring || mc->state != 1 || MPIDI_IBMC_progress_poll(0, 0) != MPI_SUCCESS)
            break;
    }
    while (mc->chans)
        chan_release(st, mc, mc->chans);
    for (int k = 0; k < mc->pool.cap; k++)
        group_leave(mc, k);
    if (mc->id)
        rdma_destroy_id(mc->id);
    if (mc->evch)
        rdma_destroy_event_channel(mc->evch);
    if (mc->qp)
        ibv_destroy_qp(mc->qp);
    if (mc->cq)
        ibv_destroy_cq(mc->cq);
    if (mc->rmr)
        ibv_dereg_mr(mc->rmr);
    MPL_free(mc->rbufs);
    MPL_free(mc->rmeta);
    /* nothing but the boards is left, and nothing polls them */
    mc->state = -1;
    mc->finalized = 1;
    snprintf(mc->why, sizeof(mc->why), "MPI_Finalize has begun");
}

void MPIDI_IBMC_mcast_free(MPIDI_IBMC_state_t * st)
{
    MPIDI_IBMC_mcast_t *mc = st->mcast;
    if (!mc)
        return;
    while (mc->boards) {
        MPIDI_IBMC_mcast_boardmem_t *b = mc->boards;
        mc->boards = b->next;
        ibv_dereg_mr(b->mr);
        MPL_free(b->words);
        MPL_free(b);
        MPIDI_IBMC_pvars.mcast_boards--;
    }
    MPL_free(mc);
    st->mcast = NULL;
}
