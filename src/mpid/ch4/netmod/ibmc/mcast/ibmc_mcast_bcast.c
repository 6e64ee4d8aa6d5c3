/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L5, multicast glue: bcast (L5.5, the top of the glue, beside
 * finalize).  Below: setup (a channel's setup and release), io (its
 * operations table, which it hands down to setup), the engine.  Above:
 * the MPIR algorithm (L8), MPI_Init's CVAR check and MPI_Comm_free's hook
 * (L7); the node allgather (L5, unordered with the glue) broadcasts
 * through it.
 *
 * MPI_Bcast over hardware multicast (MPIR_CVAR_BCAST_INTRA_ALGORITHM=
 * ibmc_mcast, ibmc_coll.h): the channel's CVARs, the broadcast's entry,
 * which sets the communicator's channel up on first use or falls back to
 * MPICH's binomial tree with every member alike, and MPI_Comm_free's
 * retirement.  The protocol is the engine's (ibmc_mcast_engine.h); the
 * design, with the seed sections it follows, is doc/design.md's "Multicast
 * channel". */

#include <mpidimpl.h>
#include "../ibmc_types.h"
#include "../ibmc_coll.h"
#include "ibmc_mcast_impl.h"
#include "ibmc_mcast_arrive.h"


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
        other subgroup is a co-root.  The co-roots form a binary tree under
        the root; each keeps a copy of every packet (from multicast, or from
        its parent in the tree when multicast lost it; every packet with
        MPIR_CVAR_IBMC_MCAST_COROOT_RELAY), answers its subgroup's NAKs, and
        acknowledges for its subgroup and the co-roots below it, so a root
        hears from SUBGROUP - 1 members and 2 co-roots instead of all.  0
        (the default) means M/2, at least 1, with M =
        MPIR_CVAR_IBMC_MCAST_ACK_EVERY (each member acknowledges once every
        M packets): 8 with the default M.  A root that streams broadcasts
        then handles about one ACK per packet it sends, which bounds its
        broadcast rate; in the simulation of doc/results.md subgroups of
        8 gave twice the rate of subgroups of 32 from 64 to 1,024 nodes,
        with the same latency and loss recovery.  Communicators of up to
        M/2 nodes have no co-roots; with M = 0 there are none.  A value at
        least the communicator's size also means none.  All processes must
        agree.

    - name        : MPIR_CVAR_IBMC_MCAST_COROOT_RELAY
      category    : CH4_IBMC
      type        : boolean
      default     : false
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        How co-roots (MPIR_CVAR_IBMC_MCAST_SUBGROUP) get the packets they
        answer their subgroup's NAKs from.  false (the default): a co-root
        takes packets by multicast like every member and asks its parent in
        the tree of co-roots, by NAK, for what multicast lost; the parent
        answers from its copy, or as soon as it has one.  Nothing goes over
        RC unless something is lost, and the root sends one multicast per
        packet and nothing else.  true (Liu, Mamidala and Panda, section
        4.3): every packet also goes over RC down the tree, one RC copy per
        packet per co-root, each a duplicate of the multicast copy when
        nothing is lost (ibmc_mcast_relays, ibmc_mcast_duplicates); a loss
        at a co-root then costs its subgroup no extra round trip.  The
        simulated comparison behind the default is in doc/design.md.
        All processes must agree.

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
        Multicast groups a process may hold.  A group is joined the first
        time a communicator's broadcast needs one and kept, so creating and
        freeing communicators of the same processes does not join and leave
        groups (which costs a subnet manager transaction each, and leaks
        multicast LIDs on some).  A communicator's groups are those of its
        lowest world rank, so communicators that broadcast at once, such as
        the rows of a process grid, get groups of their own and never
        receive each other's packets.  A new communicator takes one of its
        groups that no member uses, joining it where needed; with none left,
        one that a communicator of the same lowest rank uses (both then
        receive and drop each other's packets, ibmc_mcast_foreign); else a
        member leaves the group it has not used longest
        (ibmc_mcast_group_swaps); and when a member has all its groups busy
        with other communicators', this one runs MPICH's binomial tree.
        Every process of the job should use the same value.  From 1 to
        64.

    - name        : MPIR_CVAR_IBMC_MCAST_NAK_TIMEOUT
      category    : CH4_IBMC
      type        : int
      default     : 200
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        The time, in microseconds, that a member first waits in MPI_Bcast
        without receiving anything before it asks the root, over RC, for
        every fragment it still lacks.  A gap (a later packet before an
        earlier one) is asked for at once; this timeout catches the last
        fragments of a message, which no later packet reveals.  The timeout
        in force adapts per communicator: a retransmission that fills a real
        loss shrinks it by a quarter, down to two round trips of a NAK and
        its answer as measured, so that on a fast fabric a lost tail is
        found in a few round trips; it doubles when a retransmission arrives
        for a packet that multicast had delivered after all and on each
        further silence within a broadcast, and when multicast brings data
        that a timeout NAK asked for (the NAK was premature: the root had
        not sent yet) it becomes twice the silence that NAK ended; up to
        100 ms.  When it runs out, the
        member first polls once more without giving the processor away, and
        sends no NAK if that brings data.  When it ran out more than its own
        length before the member looked (the process was not running), no
        NAK goes either, and the timeout rises to twice that lateness, up to
        100 ms.  While the timeout is at or above this value, a member does
        not NAK on its timer at all (the root may not have sent the rest
        yet, or may have been descheduled in the middle of the message): the
        root waits the same timeout for the ACKs of its last packets, then
        asks its group by one multicast packet, saying where it sent to, and
        the members NAK what they lack at once.  A root that receives a NAK
        for packets every member has acknowledged since (the question came
        while they were on their way) doubles the timeout, once per
        question.  Only real losses, which
        bring the timeout below this value, or a co-root that gets every
        packet relayed (MPIR_CVAR_IBMC_MCAST_COROOT_RELAY), NAK on the
        timer.  From 1 to 10000000.

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

    - name        : MPIR_CVAR_IBMC_MCAST_RECV_IN_PLACE
      category    : CH4_IBMC
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Receive the broadcasts of an MPI_Bcast_init request
        (MPIR_CVAR_IBCAST_INTRA_ALGORITHM=ibmc_mcast) straight into its
        buffer: MPI_Bcast_init registers the buffer and makes a queue pair
        on the channel's group whose receives put each fragment's payload
        at its place, and every MPI_Start posts them again.  A broadcast
        whose packets come before its MPI_Start, or that meets a loss, a
        duplicate or another message's packet, is received by copies from
        there on, with the same result.  The ibmc_mcast_in_place and
        ibmc_mcast_copies pvars count each way.  false receives every
        broadcast by copies.

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
    /* defined with the allreduce algorithm (src/mpi/coll/ibmc), whose
     * result rides on this channel */
    if (MPIR_CVAR_IBMC_ALLREDUCE_MAX_BYTES < 0)
        return cvar_error("MPIR_CVAR_IBMC_ALLREDUCE_MAX_BYTES",
                          MPIR_CVAR_IBMC_ALLREDUCE_MAX_BYTES, "it must be 0 or more");
    if (MPIR_CVAR_IBMC_ALLREDUCE_TREE_KVAL < 2)
        return cvar_error("MPIR_CVAR_IBMC_ALLREDUCE_TREE_KVAL",
                          MPIR_CVAR_IBMC_ALLREDUCE_TREE_KVAL, "it must be at least 2");
    if (MPIR_CVAR_IBMC_ALLREDUCE_FANOUT < 2 ||
        MPIR_CVAR_IBMC_ALLREDUCE_FANOUT > IBMC_MCAST_PARTIAL_SLOTS)
        return cvar_error("MPIR_CVAR_IBMC_ALLREDUCE_FANOUT", MPIR_CVAR_IBMC_ALLREDUCE_FANOUT,
                          "it must be between 2 and 64");
    /* defined with the barrier algorithm, which runs on this channel */
    if (MPIR_CVAR_IBMC_BARRIER_FANOUT < 2)
        return cvar_error("MPIR_CVAR_IBMC_BARRIER_FANOUT", MPIR_CVAR_IBMC_BARRIER_FANOUT,
                          "it must be at least 2");
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

/* A broadcast that asked for the channel runs binomial: counted every time,
 * printed with MPIR_CVAR_IBMC_STATS the first time for this reason (*told). */
static void fallback_note(MPIR_Comm * comm, const char *why, int *told)
{
    MPIDI_IBMC_pvars.mcast.fallbacks++;
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

/* The channel a broadcast of len bytes on comm takes, set up on first use,
 * or NULL: *trivial says there is nothing to send (len 0, one member), and
 * otherwise the broadcast falls back, counted (fallback_note).  Every test
 * gives every member the same answer.  Called with the VCI lock held. */
static int chan_for(MPIR_Comm * comm, MPI_Aint len, MPIDI_IBMC_mcast_chan_t ** out, int *trivial)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_IBMC_state_t *st = MPIDI_IBMC_STATE();
    *out = NULL;
    *trivial = 0;
    if (comm->local_size < 2 || len == 0) {
        *trivial = 1;           /* nobody to send to, or nothing: no fallback either */
        return MPI_SUCCESS;
    }
    if (!MPIR_CVAR_IBMC_MCAST) {
        fallback_note(comm, "MPIR_CVAR_IBMC_MCAST is false", st ? &st->mcast_told_off : NULL);
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
    MPIDI_IBMC_mcast_chan_t *c = MPIDI_IBMC_MCAST_CHAN(comm);
    if (!c) {
        mpi_errno = MPIDI_IBMC_mcast_chan_setup(st, comm, &MPIDI_IBMC_mcast_ops, &c);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (!ibmc_mcast_chan_is_ready(&c->ch)) {
        /* inside one node there is nothing to fall back from: not counted */
        if (!c->single_node)
            fallback_note(comm, c->why, &c->told);
        return MPI_SUCCESS;
    }
    *out = c;
  fn_fail:
    return mpi_errno;
}

/* c's broadcast of len bytes from root, behind any posted broadcast of
 * its communicator's (ibmc_mcast_bcast), as MPI orders a communicator's
 * collectives; a root's message of another length is MPI_ERR_TRUNCATE. */
static int chan_bcast(MPIDI_IBMC_mcast_chan_t * c, void *buf, MPI_Aint len, int root)
{
    int mpi_errno = ibmc_mcast_bcast(&c->ch, buf, (uint64_t) len, root);
    if (!mpi_errno && c->ch.mismatch)
        MPIR_ERR_SET2(mpi_errno, MPI_ERR_TRUNCATE, "**ibmc_mcast_len", "**ibmc_mcast_len %d %d",
                      root, (int) len);
    return mpi_errno;
}

int MPIDI_IBMC_mcast_bcast(void *buf, MPI_Aint len, int root, MPIR_Comm * comm, int *used)
{
    int mpi_errno = MPI_SUCCESS, trivial;
    MPIDI_IBMC_mcast_chan_t *c;
    *used = 0;
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    mpi_errno = chan_for(comm, len, &c, &trivial);
    *used = trivial;
    if (!mpi_errno && c) {
        mpi_errno = chan_bcast(c, buf, len, root);
        *used = !mpi_errno;
    }
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    return mpi_errno;
}

/* MPI_Barrier (len 0) and the small MPI_Allreduce: the node leaders'
 * arrivals, or partial results combined with combine, up the board tree
 * of fanout children a parent (mcast/ibmc_mcast_arrive.h), then rank 0's
 * release: a byte, or the result in buf, the same bits to all. */
static int tree_then_release(void *buf, MPI_Aint len, MPIR_Comm * comm, int fanout,
                             MPIDI_IBMC_combine_fn combine, void *ctx, int *used)
{
    int mpi_errno = MPI_SUCCESS, trivial;
    MPIDI_IBMC_mcast_chan_t *c;
    unsigned char release = 0;
    *used = 0;
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    mpi_errno = chan_for(comm, len ? len : 1, &c, &trivial);
    *used = trivial;
    if (mpi_errno || !c)
        goto fn_exit;
    mpi_errno = len ? ibmc_mcast_reduce(&c->ch, fanout, buf, (size_t) len, combine, ctx) :
        ibmc_mcast_arrive(&c->ch, fanout);
    if (!mpi_errno)
        mpi_errno = len ? chan_bcast(c, buf, len, 0) : chan_bcast(c, &release, 1, 0);
    *used = !mpi_errno;
  fn_exit:
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    return mpi_errno;
}

int MPIDI_IBMC_mcast_barrier(MPIR_Comm * comm, int fanout, int *used)
{
    return tree_then_release(NULL, 0, comm, fanout, NULL, NULL, used);
}

int MPIDI_IBMC_mcast_allreduce(void *buf, MPI_Aint len, MPIR_Comm * comm, int fanout,
                               MPIDI_IBMC_combine_fn combine, void *ctx, int *used)
{
    MPL_COMPILE_TIME_ASSERT(MPIDI_IBMC_MCAST_REDUCE_MAX_BYTES == IBMC_MCAST_PARTIAL_BYTES);
    MPIR_Assert(len > 0 && len <= MPIDI_IBMC_MCAST_REDUCE_MAX_BYTES);
    return tree_then_release(buf, len, comm, fanout, combine, ctx, used);
}

/* The engine's posted broadcast lives in the caller's MPIDI_IBMC_mcast_req_t. */
MPL_STATIC_INLINE_PREFIX ibmc_mcast_op_t *op_of(MPIDI_IBMC_mcast_req_t * req)
{
    MPL_COMPILE_TIME_ASSERT(sizeof(ibmc_mcast_op_t) <= sizeof(req->mem));
    return (ibmc_mcast_op_t *) (void *) req->mem;
}

int MPIDI_IBMC_mcast_ibcast_usable(MPI_Aint len, MPIR_Comm * comm, int *usable)
{
    int mpi_errno = MPI_SUCCESS, trivial;
    MPIDI_IBMC_mcast_chan_t *c;
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    mpi_errno = chan_for(comm, len, &c, &trivial);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    *usable = c != NULL || trivial;
    return mpi_errno;
}

int MPIDI_IBMC_mcast_ibcast_post(MPIDI_IBMC_mcast_req_t * req, void *buf, MPI_Aint len,
                                 int root, MPIR_Comm * comm, int ready, void *place)
{
    int mpi_errno = MPI_SUCCESS;
    ibmc_mcast_op_t *op = op_of(req);
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    MPIDI_IBMC_mcast_chan_t *c = MPIDI_IBMC_MCAST_CHAN(comm);
    memset(op, 0, sizeof(*op));
    if (len == 0 || comm->local_size < 2) {
        /* nothing to send (the usable answer said so for len and comm) */
        op->state = IBMC_MCAST_OP_DONE;
    } else if (!c || !ibmc_mcast_chan_is_ready(&c->ch)) {
        /* the usable answer was yes: only a channel released since (a
         * persistent request started after MPI_Finalize began) has none */
        op->state = IBMC_MCAST_OP_DONE;
        MPIR_ERR_SET1(mpi_errno, MPI_ERR_OTHER, "**ibmc_mcast_nochan", "**ibmc_mcast_nochan %x",
                      (unsigned) comm->context_id);
    } else {
        ibmc_mcast_op_post(&c->ch, op, buf, (uint64_t) len, root, ready);
        op->place = place;
        MPIDI_IBMC_pvars.mcast.bcasts_posted++;
    }
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    return mpi_errno;
}

int MPIDI_IBMC_mcast_ibcast_place(void *buf, MPI_Aint len, int root, MPIR_Comm * comm,
                                  void **place)
{
    MPIDI_IBMC_state_t *st = MPIDI_IBMC_STATE();
    *place = NULL;
    if (!MPIR_CVAR_IBMC_MCAST_RECV_IN_PLACE || len <= 0 || comm->rank == root || !st)
        return MPI_SUCCESS;
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    MPIDI_IBMC_mcast_chan_t *c = MPIDI_IBMC_MCAST_CHAN(comm);
    MPIDI_IBMC_mcast_place_t *p = NULL;
    char why[192];
    if (c && ibmc_mcast_chan_is_ready(&c->ch) && st->mcast) {
        if (MPIDI_IBMC_mcast_place_new(st, buf, (uint64_t) len, &p, why, sizeof(why)) == 0) {
            *place = p;
        } else {
            /* the broadcasts still run, received by copies */
            MPIDI_IBMC_pvars.mcast.place_refused++;
            if (MPIR_CVAR_IBMC_STATS && !st->mcast->place_told) {
                st->mcast->place_told = 1;
                printf("ibmc-stats: rank %d receives an MPI_Bcast_init request's broadcasts of "
                       "%ld bytes by copies: %s\n", st->my_rank, (long) len, why);
                fflush(stdout);
            }
        }
    }
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    return MPI_SUCCESS;
}

void MPIDI_IBMC_mcast_ibcast_place_free(void *place)
{
    MPIDI_IBMC_state_t *st = MPIDI_IBMC_STATE();
    if (!place || !st)
        return;
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    MPIDI_IBMC_mcast_place_free(st, place);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
}

void MPIDI_IBMC_mcast_ibcast_ready(MPIDI_IBMC_mcast_req_t * req)
{
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    ibmc_mcast_op_ready(op_of(req));
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
}

int MPIDI_IBMC_mcast_ibcast_test(MPIDI_IBMC_mcast_req_t * req, int root, MPI_Aint len,
                                 int *done)
{
    int mpi_errno = MPI_SUCCESS;
    ibmc_mcast_op_t *op = op_of(req);
    /* another thread's progress turn may be finishing it */
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    *done = ibmc_mcast_op_done(op);
    if (*done && op->mismatch) {
        op->mismatch = 0;
        MPIR_ERR_SET2(mpi_errno, MPI_ERR_TRUNCATE, "**ibmc_mcast_len", "**ibmc_mcast_len %d %d",
                      root, (int) len);
    }
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    return mpi_errno;
}

/* The communicator is gone: the engine retires its channel, which answers
 * NAKs until every member has acknowledged everything (MPIDI_IBMC_mcast_poll
 * releases it then). */
int MPIDI_IBMC_mcast_comm_free(MPIR_Comm * comm)
{
    int mpi_errno = MPI_SUCCESS, release;
    MPIDI_IBMC_state_t *st = MPIDI_IBMC_STATE();
    MPIDI_IBMC_mcast_chan_t *c = MPIDI_IBMC_MCAST_CHAN(comm);
    if (!c)
        return MPI_SUCCESS;
    comm->dev.ch4.netmod.ibmc.coll = NULL;
    /* after MPI_Finalize's release of every channel, c is gone */
    if (!st || !st->mcast || st->mcast->finalized)
        return MPI_SUCCESS;
    if (!ibmc_mcast_chan_is_ready(&c->ch)) {
        MPIDI_IBMC_mcast_chan_release(st, st->mcast, c);
        return MPI_SUCCESS;
    }
    mpi_errno = ibmc_mcast_chan_retire(&c->ch, &release);
    MPIR_ERR_CHECK(mpi_errno);
    if (release)
        MPIDI_IBMC_mcast_chan_release(st, st->mcast, c);
  fn_fail:
    return mpi_errno;
}
