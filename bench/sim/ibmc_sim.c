/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* ibmc_sim: the multicast channel's real protocol engine
 * (src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_engine.h) on N simulated
 * nodes, over SimGrid 3.32 through its C API only.
 *
 * Each node is one SimGrid actor on its own host with one engine and one
 * channel.  The engine's operations (ibmc_mcast_ops_t) are implemented as:
 *   post      one comm of the packet's bytes from the root to its switch's
 *             host; switch actors replicate it (one comm per other member
 *             below, and in a fat tree one per other leaf switch), each
 *             member's copy dropped with probability --loss.  The packet
 *             crosses each link of the tree once: the root's uplink, each
 *             receiver's downlink, and in a fat tree each leaf switch's
 *             uplink once.  A switch actor's host sits on a FATPIPE of
 *             1 PB/s and no latency, so it is never the bottleneck.
 *   post_room the send queue: --sq minus the posts whose comm to the switch
 *             has not completed yet.
 *   post_ctl  the root's question to the group: a post of its 48 bytes.
 *   send_rc   one comm of sizeof(ibmc_mcast_rc_t) + len bytes to the
 *             member's mailbox.  Every node's mailbox has it as permanent
 *             receiver, so transfers start at once and are taken in put
 *             order: FIFO per pair.
 *   write_board *written = 0 (every ACK and barrier arrival goes as an RC
 *             message), unless --boards: then, when the member written to
 *             has a board, one comm of 8 bytes to its mailbox, behind the
 *             RC messages already sent to it as on one RC queue pair.  The
 *             writer pays --cpu-per-pkt as for a send; the owner pays
 *             nothing (an RDMA write costs the target's CPU only the poll
 *             of the word, which the engine does anyway): when the owner
 *             takes its inbox the word is stored into its board, at
 *             which * size + the writer's rank, and the engine reads it.
 *             Only members that some member can write to get a board
 *             (boards_needed: ACK targets, arrival parents), so that 8,192
 *             nodes do not hold 1 GiB of boards nothing writes into; a
 *             board on every node gave the same lines at 64 to 1,024 nodes.
 *   write_data *written = 0 (an allreduce's partial result rides in its RC
 *             message), unless --boards: then, as write_board, one comm of
 *             the len bytes to the member's mailbox, behind what was sent
 *             to it before; at dispatch they are copied into its board at
 *             the byte offset given.  The writer pays --cpu-per-pkt, the
 *             owner nothing.
 *   now       simgrid_get_clock().
 *   flush     nothing: each post's comm has started already.
 *   wait      hand every message that has arrived to the engine; with
 *             nothing, block until a message arrives or the engine's next
 *             timer is due (ibmc_mcast_bcast_deadline), whichever comes
 *             first.  A node's receiver actor takes its mailbox's messages
 *             as they arrive into an inbox and wakes the node (a
 *             semaphore), so reactions are not quantized and an idle node
 *             costs no simulation work.  Only a root whose send queue is
 *             full looks again every --poll-us.
 *   poll      the same, never blocking.
 * CPU: every message handled or sent costs --cpu-per-pkt us of the node's
 * time (sg_actor_sleep_for, paid before the node's next send or at the end
 * of its wait turn).  See README.md for what is and is not modelled.
 *
 * --grid R: the nodes are R rows of N/R consecutive nodes, each row a
 * channel of its own (ranks 0..N/R-1, the same context id and epoch in
 * every row, as MPI_Comm_split gives disjoint siblings), and every row
 * broadcasts at once.  With --groups separate a row's multicast packets
 * reach its own nodes only; with --groups shared they reach every node,
 * and a node hands another row's packet to its channel with source -1,
 * as the receive path does for a sender that is no member: the engine
 * refuses it as foreign, and the node pays --cpu-per-pkt for it.
 *
 * --inflight K (rate mode): each node keeps K broadcasts posted
 * (ibmc_mcast_op_post, MPI_Ibcast's path) and waits for the oldest, and
 * only ibmc_mcast_chan_progress runs them (run_posted).
 *
 * --coll barrier --fanout F (latency mode): each iteration is the
 * channel's MPI_Barrier, every node entering it together (after the same
 * ideal barrier as a broadcast's iterations): ibmc_mcast_arrive up the
 * F-ary tree to rank 0 (ibmc_mcast_arrive.h), then rank 0's one-byte
 * release, ibmc_mcast_bcast from root 0.  mean_lat_us is, as for a
 * broadcast, the mean over iterations of the first node's entry to the
 * last node out of the release (the root's own return included);
 * arrive_us the same mean from the first entry to rank 0 holding every
 * arrival.  Only the release is multicast, so --loss acts on it alone.
 *
 * --coll allreduce --size S --fanout F (latency mode; S a multiple of 8,
 * 8 [the default then] to IBMC_MCAST_PARTIAL_BYTES = 128; F at most
 * IBMC_MCAST_PARTIAL_SLOTS = 64): each iteration is a small
 * MPI_Allreduce of S / 8 doubles summed, every node entering it
 * together: each node fills its S bytes (element j of rank r in
 * iteration k is r + k + 0.1 j), ibmc_mcast_reduce up the F-ary tree
 * (each member's partial result written into its parent's slot, then its
 * count; with no boards in its RC message), then rank 0's
 * ibmc_mcast_bcast of the S-byte total.  Each iteration checks that
 * every node holds rank 0's bytes and that each element is within 1e-9
 * relative of the arithmetic sum.  mean_lat_us and arrive_us are timed as
 * for the barrier, arrive_us ending when rank 0 holds the total.  The
 * combine (S / 8 additions, tens of ns) costs no simulated CPU: only the
 * messages handled and sent, and writes made, do.  Only the result is
 * multicast, so --loss acts on it alone. */

#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
#include <time.h>
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>
#include <math.h>
#include "ibmc_mcast_engine.h"
#include "ibmc_mcast_arrive.h"

#define SIM_ERR_TIMEOUT 1001    /* wait's error: the simulated-time bound passed */
#define SIM_ERR_ABORT   1002    /* wait's error: another node failed */
#define SIM_ERR_BOARD   1003    /* write_data: outside the board, or too long */

/* ---- options ---- */

static struct {
    int nodes;
    uint64_t size;
    int iters;
    double loss;
    double dup, reorder;        /* per copy: sent twice; delayed, so later ones pass it */
    double reorder_delay;       /* the longest such delay, seconds */
    uint64_t seed;
    uint32_t window, ack_every;
    int subgroup;
    int relay_on_loss;          /* --relay on-loss (the netmod's default): co-roots NAK
                                 * their parent; always: every packet relayed */
    uint32_t mtu;
    int rotate;
    int barrier;
    double bw, lat;             /* per host link: B/s, s */
    double cpu;                 /* s per message handled or sent */
    double poll;                /* s between looks at a full send queue */
    int sq;                     /* send queue depth of post */
    double max_time;            /* simulated-time bound, s */
    uint32_t nak_timeout_us, nak_max_us;
    int verbose;
    int mode;                   /* MODE_LATENCY, MODE_RATE, MODE_SKEW */
    double skew;                /* MODE_SKEW: receivers wait uniform 0..skew s, s */
    const char *platform_out;   /* also write the platform XML here */
    int platform_only;          /* ... and exit */
    int topology;               /* TOPO_AUTO, TOPO_STAR, TOPO_FATTREE */
    int leaf;                   /* fat tree: members per leaf switch */
    int grid;                   /* --grid R: R rows of nodes/R, each a channel of its own,
                                 * broadcasting at once; 0: one channel of every node */
    int groups_shared;          /* --groups shared: one multicast group for every row */
    int inflight;               /* --inflight K: broadcasts each node keeps posted
                                 * (ibmc_mcast_op_post); 0: ibmc_mcast_bcast, blocking */
    int boards;                 /* --boards: ACKs and arrivals as writes into boards */
    int coll;                   /* COLL_BCAST, COLL_BARRIER, COLL_ALLREDUCE */
    int fanout;                 /* --fanout F: the barrier's or allreduce's tree */
    int size_set;               /* --size given (--coll allreduce: 8 otherwise) */
} opt = {
    .nodes = 8,.size = 1,.iters = 10,.loss = 0,.seed = 1,.window = 64,.ack_every = 16,
    .subgroup = 0,.relay_on_loss = 1,.mtu = 4096,.rotate = 0,.barrier = 1,.bw = 12.5e9,.lat = 0.6e-6,
    .cpu = 0.3e-6,.poll = 0.2e-6,.sq = 64,.max_time = 10.0,.nak_timeout_us = 200,.reorder_delay = 5e-6,
    .nak_max_us = 100000,.verbose = 0,.mode = 0,.skew = 0,.platform_out = NULL,
    .platform_only = 0,.topology = 0,.leaf = 32,.grid = 0,.groups_shared = 0,.inflight = 0,
    .boards = 0,.coll = 0,.fanout = 32
};

enum { TOPO_AUTO = 0, TOPO_STAR = 1, TOPO_FATTREE = 2 };
static const char *const topo_name[] = { "auto", "star", "fattree" };

/* --topology auto: a star (one crossbar) up to this many nodes, above it a
 * fat tree */
#define STAR_MAX 64

enum { MODE_LATENCY = 0, MODE_RATE = 1, MODE_SKEW = 2 };
static const char *const mode_name[] = { "latency", "rate", "skew" };

enum { COLL_BCAST = 0, COLL_BARRIER = 1, COLL_ALLREDUCE = 2 };
static const char *const coll_name[] = { "bcast", "barrier", "allreduce" };

/* --groups: index 1 is shared, opt.groups_shared */
static const char *const groups_name[] = { "separate", "shared" };

/* ---- deterministic random numbers (splitmix64) ---- */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double rng_unit(void)
{
    return (double) (rng_next() >> 11) * (1.0 / 9007199254740992.0);
}

/* --mode skew: the receivers' delays, a stream of their own (splitmix64
 * seeded from --seed) so that the loss stream is unchanged. */
static uint64_t skew_state;

static double skew_unit(void)
{
    uint64_t z = (skew_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double) (z >> 11) * (1.0 / 9007199254740992.0);
}

/* ---- messages on the simulated wire ---- */

enum { MSG_MCAST = 1, MSG_RC = 2, MSG_BOARD = 3, MSG_DATA = 4 };

typedef struct {
    int kind;
    int src;                    /* member that sent it (the root for MSG_MCAST) */
    int refs;                   /* MSG_MCAST: copies not yet consumed */
    ibmc_mcast_rc_t h;          /* MSG_RC */
    int which;                  /* MSG_BOARD: IBMC_MCAST_BOARD_ACKS or _ARRIVALS */
    uint64_t word;              /* MSG_BOARD */
    size_t off;                 /* MSG_DATA: byte offset in the board */
    size_t len;
    unsigned char data[];
} msg_t;

static msg_t *msg_new(int kind, int src, size_t len)
{
    msg_t *m = malloc(sizeof(msg_t) + (len ? len : 1));
    if (!m) {
        fprintf(stderr, "ibmc_sim: out of memory\n");
        exit(2);
    }
    m->kind = kind;
    m->src = src;
    m->refs = 1;
    m->len = len;
    return m;
}

static void msg_unref(void *p)
{
    msg_t *m = p;
    if (--m->refs == 0)
        free(m);
}

/* ---- nodes ---- */

typedef struct {
    int id;
    int rank, base;             /* its rank in its row's channel; the row's first node */
    ibmc_mcast_engine_t eng;
    ibmc_mcast_stats_t st;
    ibmc_mcast_chan_t ch;
    sg_mailbox_t mb;
    sg_mailbox_t up;            /* its switch: where its multicast posts go */
    msg_t **inbox;              /* arrived, not yet handed to the engine (a ring) */
    size_t in_head, in_n, in_cap;
    sg_sem_t wake;              /* released when something arrives while it sleeps */
    int sleeping;
    int in_bcast;               /* inside ibmc_mcast_bcast, or a posted broadcast runs:
                                 * its timers count */
    sg_comm_t *sq;              /* posts not yet completed, oldest first (a ring) */
    int sq_head, sq_n;
    double debt;                /* CPU time owed, s */
    unsigned char *buf;
    uint64_t relay_served;      /* co-root: NAKs answered from its store */
    uint64_t bad_bytes;
    uint64_t frags_delivered;   /* into posted buffers, each position once */
    uint64_t frags_expected;    /* of the broadcasts it did not send */
    uint64_t refused;           /* correct packets refused: out of window, wrong source,
                                 * malformed, length mismatch (none may be) */
    uint64_t handled, sent;     /* messages taken in and sent (RC and multicast posts) */
    uint64_t mc_in, mc_own;     /* multicast packets the fabric sent it; of them, its row's */
    uint64_t taken_other;       /* multicast packets of other rows handed to its channel */
    uint64_t foreign;           /* packets its channel refused as another's (RX_FOREIGN) */
    uint64_t rc_in, rc_out, posts;      /* RC messages taken in and sent; multicast posts */
    uint64_t writes, words_in;  /* --boards: words it wrote; words written into its board */
    uint64_t data_writes, data_in;      /* --boards: write_data it made; into its board */
    uint64_t *board;            /* --boards: IBMC_MCAST_BOARD_WORDS(row), or NULL: none */
    int err;
} node_t;

static struct {
    node_t *node;
    sg_mailbox_t *mb;           /* by member */
    sg_mailbox_t sw;            /* the star's switch, or the fat tree's core */
    sg_mailbox_t *lsw;          /* fat tree: the leaf switches */
    int leaves;                 /* fat tree: how many */
    int row;                    /* members of a channel: nodes / --grid, or every node */
    double *t_start, *t_end;    /* by iteration: first root's start, last member's completion */
    int *starts;                /* by iteration: roots started */
    double *row_start, *row_end;        /* by row and iteration: as t_start and t_end */
    double *t_root;             /* by iteration: the root's own completion */
    double *t_arrive;           /* --coll barrier, by iteration: rank 0 has every arrival;
                                 * allreduce: rank 0 holds the total */
    unsigned char *ar_total;    /* --coll allreduce, by iteration: rank 0's total, S bytes */
    int *iter_done;             /* by iteration: members done */
    int finished;               /* members done with every iteration */
    int abort;
    uint64_t sw_drops, sw_copies, sw_dups, sw_reordered;
    double in_bcast;            /* receivers' time inside ibmc_mcast_bcast, summed, s */
    uint64_t in_bcast_n;        /* ... over this many (receiver, broadcast) pairs */
    int posted_max;             /* --inflight: the longest queue of posted broadcasts a
                                 * channel held, the running one included */
} g;

static unsigned char byte_of(int k, uint64_t i)
{
    return (unsigned char) ((k + 1) * 131 + i * 29 + (i >> 8) + (i >> 16) * 7);
}

static void pay(node_t * me)
{
    if (me->debt > 0) {
        double d = me->debt;
        me->debt = 0;
        sg_actor_sleep_for(d);
    }
}

/* ---- the engine's operations ---- */

static int op_post_room(void *io, ibmc_mcast_chan_t * c)
{
    node_t *me = io;
    (void) c;
    while (me->sq_n > 0 && sg_comm_test(me->sq[me->sq_head])) {
        me->sq_head = (me->sq_head + 1) % opt.sq;
        me->sq_n--;
    }
    return opt.sq - me->sq_n;
}

/* Each post is already on its way (op_post); a doorbell costs nothing more
 * here than the per-packet CPU cost. */
static int op_flush(void *io, ibmc_mcast_chan_t * c)
{
    (void) io;
    (void) c;
    return 0;
}

static int op_post(void *io, ibmc_mcast_chan_t * c, const void *pkt, size_t len)
{
    node_t *me = io;
    (void) c;
    me->debt += opt.cpu;
    me->sent++;
    me->posts++;
    pay(me);
    msg_t *m = msg_new(MSG_MCAST, me->id, len);
    memcpy(m->data, pkt, len);
    sg_comm_t comm = sg_mailbox_put_async(me->up, m, (long) len);
    if (me->sq_n == opt.sq) {
        /* the engine asked post_room first, so this does not happen; keep
         * the ring sound anyway */
        sg_comm_wait(me->sq[me->sq_head]);
        me->sq_head = (me->sq_head + 1) % opt.sq;
        me->sq_n--;
    }
    me->sq[(me->sq_head + me->sq_n) % opt.sq] = comm;
    me->sq_n++;
    return 0;
}

static void msg_free(void *p)
{
    free(p);
}

static int op_send_rc(void *io, ibmc_mcast_chan_t * c, int to, const ibmc_mcast_rc_t * h,
                      const void *pkt, size_t len, uint16_t pkt_flags)
{
    node_t *me = io;
    (void) c;
    me->debt += opt.cpu;
    me->sent++;
    me->rc_out++;
    pay(me);
    msg_t *m = msg_new(MSG_RC, me->id, len);
    m->h = *h;
    if (len) {
        memcpy(m->data, pkt, len);
        if (pkt_flags) {
            ibmc_mcast_hdr_t hd;
            memcpy(&hd, m->data, sizeof(hd));
            hd.flags |= pkt_flags;
            memcpy(m->data, &hd, sizeof(hd));
        }
    }
    sg_comm_t comm = sg_mailbox_put_init(g.mb[me->base + to], m, (long) (sizeof(*h) + len));
    sg_comm_detach(comm, msg_free);
    return 0;
}

/* --boards: an RDMA write of one word into member to's board, where it
 * has one.  It goes on the same mailbox as the RC messages to `to`, so it
 * lands after every one sent before it, as on one RC queue pair. */
static int op_write_board(void *io, ibmc_mcast_chan_t * c, int to, int which, uint64_t word,
                          int *written)
{
    node_t *me = io;
    (void) c;
    *written = 0;
    if (!opt.boards || !g.node[me->base + to].board)
        return 0;
    me->debt += opt.cpu;
    me->writes++;
    pay(me);
    msg_t *m = msg_new(MSG_BOARD, me->id, 0);
    m->which = which;
    m->word = word;
    sg_comm_t comm = sg_mailbox_put_init(g.mb[me->base + to], m, (long) sizeof(word));
    sg_comm_detach(comm, msg_free);
    *written = 1;
    return 0;
}

/* --boards: an RDMA write of len bytes into member to's board at byte
 * offset `offset` (an allreduce's partial result), on the same mailbox as
 * write_board's words, so in order with them and the RC messages. */
static int op_write_data(void *io, ibmc_mcast_chan_t * c, int to, size_t offset, const void *data,
                         size_t len, int *written)
{
    node_t *me = io;
    (void) c;
    *written = 0;
    if (!opt.boards || !g.node[me->base + to].board)
        return 0;
    if (len > IBMC_MCAST_PARTIAL_BYTES ||
        offset + len > IBMC_MCAST_BOARD_WORDS(g.row) * sizeof(uint64_t)) {
        fprintf(stderr, "node %d: write_data of %zu bytes at offset %zu of a board of %zu\n",
                me->id, len, offset, IBMC_MCAST_BOARD_WORDS(g.row) * sizeof(uint64_t));
        return SIM_ERR_BOARD;
    }
    me->debt += opt.cpu;
    me->data_writes++;
    pay(me);
    msg_t *m = msg_new(MSG_DATA, me->id, len);
    m->off = offset;
    memcpy(m->data, data, len);
    sg_comm_t comm = sg_mailbox_put_init(g.mb[me->base + to], m, (long) len);
    sg_comm_detach(comm, msg_free);
    *written = 1;
    return 0;
}

static double op_now(void *io)
{
    (void) io;
    return simgrid_get_clock();
}

/* Hand one message to the engine. */
static int dispatch(node_t * me, msg_t * m)
{
    int err;
    if (m->kind == MSG_BOARD) {
        /* the NIC wrote it: no CPU, no message handled; the engine finds
         * it when it polls the board */
        me->board[(size_t) m->which * (size_t) g.row + (size_t) (m->src - me->base)] = m->word;
        me->words_in++;
        free(m);
        return 0;
    }
    if (m->kind == MSG_DATA) {
        /* the same: its bytes land in the board, the owner does nothing */
        memcpy((unsigned char *) me->board + m->off, m->data, m->len);
        me->data_in++;
        free(m);
        return 0;
    }
    me->handled++;
    if (m->kind == MSG_MCAST) {
        /* the receive path names a sender outside the channel -1, as
         * ibmc_mcast_recv.c does for a queue pair no member owns */
        int own = m->src >= me->base && m->src < me->base + g.row;
        me->taken_other += !own;
        err = ibmc_mcast_mcast_in(&me->ch, m->data, m->len, own ? m->src - me->base : -1);
        msg_unref(m);
    } else {
        me->rc_in++;
        err = ibmc_mcast_rc_in(&me->ch, m->src - me->base, &m->h, m->data, m->len);
        free(m);
    }
    me->debt += opt.cpu;
    return err;
}

/* Every message that has arrived, handed to the engine; *n says how many. */
static int take_arrived(node_t * me, int *n)
{
    int err;
    *n = 0;
    while (me->in_n > 0) {
        msg_t *m = me->inbox[me->in_head];
        me->in_head = (me->in_head + 1) % me->in_cap;
        me->in_n--;
        if ((err = dispatch(me, m)))
            return err;
        (*n)++;
    }
    return 0;
}

/* The engine's look before a NAK: what has arrived, with no sleep. */
static int op_poll(void *io)
{
    node_t *me = io;
    int n;
    return take_arrived(me, &n);
}

/* Wake a node that sleeps in op_wait. */
static void wake(node_t * n)
{
    if (n->sleeping) {
        n->sleeping = 0;
        sg_sem_release(n->wake);
    }
}

static void wake_all(void)
{
    for (int i = 0; i < opt.nodes; i++)
        wake(&g.node[i]);
}

/* A node's receiver: takes every message from the node's mailbox as it
 * arrives (it is the mailbox's permanent receiver, so transfers start when
 * sent and arrive in put order) and wakes the node. */
static void receiver_main(int argc, char *argv[])
{
    (void) argc;
    node_t *me = &g.node[atoi(argv[1])];
    char name[32];
    snprintf(name, sizeof(name), "n%d", me->id);
    sg_mailbox_set_receiver(name);
    for (;;) {
        msg_t *m = sg_mailbox_get(me->mb);
        if (me->in_n == me->in_cap) {
            size_t cap = me->in_cap ? 2 * me->in_cap : 64;
            msg_t **q = malloc(cap * sizeof(*q));
            if (!q) {
                fprintf(stderr, "ibmc_sim: out of memory\n");
                exit(2);
            }
            for (size_t i = 0; i < me->in_n; i++)
                q[i] = me->inbox[(me->in_head + i) % me->in_cap];
            free(me->inbox);
            me->inbox = q;
            me->in_head = 0;
            me->in_cap = cap;
        }
        me->inbox[(me->in_head + me->in_n) % me->in_cap] = m;
        me->in_n++;
        wake(me);
    }
}

/* Seconds from now until `due`, 1 ns past it: the engine's comparisons
 * are strict. */
static double until(double due)
{
    double d = due - simgrid_get_clock();
    return d > 0 ? d + 1e-9 : 1e-9;
}

/* How long an idle node may sleep: until the engine's next timer, inside a
 * broadcast (ibmc_mcast_bcast, or the posted one that runs) or, as a root,
 * on its unacknowledged last packets; a root with
 * a full send queue looks again every --poll-us; otherwise only messages
 * and the end of the barrier wake it, bounded by 1 ms of simulated time. */
static double idle_for(node_t * me)
{
    double t = 1e-3, due = ibmc_mcast_chan_deadline(&me->ch);
    if (due != HUGE_VAL && until(due) < t)
        t = until(due);
    if (me->in_bcast) {
        due = ibmc_mcast_bcast_deadline(&me->ch);
        if (due != HUGE_VAL && until(due) < t)
            t = until(due);
        if (me->sq_n == opt.sq && opt.poll < t)
            t = opt.poll;
    }
    return t;
}

/* The rest of a wait turn, after the channel's progress: what has arrived
 * goes to the engine; with nothing, the node sleeps (idle_for). */
static int wait_rest(node_t * me)
{
    int n = 0, err;
    if ((err = take_arrived(me, &n)))
        return err;
    if (n)
        pay(me);
    else if (!g.abort) {
        me->sleeping = 1;
        sg_sem_acquire_timeout(me->wake, idle_for(me));
        me->sleeping = 0;
    }
    if (g.abort)
        return SIM_ERR_ABORT;
    if (simgrid_get_clock() > opt.max_time) {
        g.abort = 1;
        wake_all();
        return SIM_ERR_TIMEOUT;
    }
    return 0;
}

static int op_wait(void *io)
{
    node_t *me = io;
    int err, release;
    /* as the netmod's progress hook (mcast/ibmc_mcast_recv.c) on every poll: a
     * co-root's relays left for its next turn go now */
    if ((err = ibmc_mcast_chan_progress(&me->ch, &release)))
        return err;
    return wait_rest(me);
}

static void *op_zalloc(void *io, size_t bytes)
{
    (void) io;
    return calloc(1, bytes);
}

static void op_free(void *io, void *p)
{
    (void) io;
    free(p);
}

/* The root's question to the group: a multicast packet like its data. */
static int op_post_ctl(void *io, ibmc_mcast_chan_t * c, const void *pkt, size_t len, int *sent)
{
    *sent = op_post_room(io, c) > 0;
    return *sent ? op_post(io, c, pkt, len) : 0;
}

static const ibmc_mcast_ops_t ops = {
    .post = op_post,.flush = op_flush,.post_ctl = op_post_ctl,.post_room = op_post_room,
    .send_rc = op_send_rc,
    .write_board = op_write_board,.write_data = op_write_data,.now = op_now,.wait = op_wait,.poll = op_poll,.zalloc = op_zalloc,
    .free = op_free
};

/* ---- actors ---- */

/* ---- the fabric's multicast ---- */

/* fat tree: leaf switches, and the member after leaf l's last (the last
 * leaf may be partial) */
static int leaf_count(void)
{
    return (opt.nodes + opt.leaf - 1) / opt.leaf;
}

static int leaf_end(int l)
{
    return (l + 1) * opt.leaf < opt.nodes ? (l + 1) * opt.leaf : opt.nodes;
}

/* The members of the multicast group m was posted to, *first..*last-1:
 * every node, unless each row of the grid has a group of its own. */
static void group_of(const msg_t * m, int *first, int *last)
{
    if (opt.grid && !opt.groups_shared) {
        *first = m->src / g.row * g.row;
        *last = *first + g.row;
    } else {
        *first = 0;
        *last = opt.nodes;
    }
}

/* A copy the fabric holds back for a while (--reorder). */
typedef struct {
    msg_t *m;
    int dst;
    double delay;
} delayed_t;

static void delayed_main(int argc, char *argv[])
{
    (void) argc;
    (void) argv;
    delayed_t *dl = sg_actor_self_get_data();
    sg_actor_sleep_for(dl->delay);
    sg_comm_detach(sg_mailbox_put_init(g.mb[dl->dst], dl->m, (long) dl->m->len), msg_unref);
    free(dl);
}

/* One packet's copies leaving a switch, sent by an actor of their own that
 * waits for them and ends.  Detached comms would need no actor, but SimGrid
 * 3.32 keeps every detached comm in one list of maestro's and walks all of
 * it whenever one ends (CommImpl::finish), so a rate run's host time grew
 * with the square of the copies in flight in the whole fabric.  A comm also
 * stays in its sender's list until its sender waits for it, and that list
 * is walked whenever a comm the sender waits for ends; so the switch, which
 * waits for every packet, must not be the sender.  A fan-out actor's list
 * holds one packet's copies.  The copies, and so the simulated times, are
 * those of detached sends. */
typedef struct {
    msg_t *m;
    int n;
    sg_mailbox_t to[];
} fanout_t;

static void fanout_main(int argc, char *argv[])
{
    (void) argc;
    (void) argv;
    fanout_t *f = sg_actor_self_get_data();
    sg_comm_t *comms = malloc((size_t) f->n * sizeof(*comms));
    if (!comms) {
        fprintf(stderr, "ibmc_sim: out of memory\n");
        exit(2);
    }
    for (int i = 0; i < f->n; i++)
        comms[i] = sg_mailbox_put_async(f->to[i], f->m, (long) f->m->len);
    for (int i = 0; i < f->n; i++)
        sg_comm_wait(comms[i]);
    free(comms);
    free(f);
}

static fanout_t *fanout_new(msg_t * m, int cap)
{
    fanout_t *f = malloc(sizeof(*f) + (size_t) cap * sizeof(sg_mailbox_t));
    if (!f) {
        fprintf(stderr, "ibmc_sim: out of memory\n");
        exit(2);
    }
    f->m = m;
    f->n = 0;
    return f;
}

static void fanout_start(fanout_t * f)
{
    if (f->n == 0) {
        free(f);
        return;
    }
    sg_actor_t a = sg_actor_init("fanout", sg_host_self());
    sg_actor_set_data(a, f);
    sg_actor_start(a, fanout_main, 0, NULL);
}

/* A switch's last hop: a copy of m to each member first..last-1 below it
 * but m's source, each lost with probability opt.loss, sent twice with
 * opt.dup, held back with opt.reorder.  keep and twice have room for
 * last - first members.  The caller keeps its own reference to m. */
static void to_members(fanout_t * f, msg_t * m, int first, int last, unsigned char *keep,
                       unsigned char *twice)
{
    int copies = 0;
    for (int d = first; d < last; d++) {
        int i = d - first;
        keep[i] = d != m->src && !(opt.loss > 0 && rng_unit() < opt.loss);
        twice[i] = keep[i] && opt.dup > 0 && rng_unit() < opt.dup;
        copies += keep[i] + twice[i];
        g.node[d].mc_in += keep[i] + twice[i];
        g.node[d].mc_own += (uint64_t) (keep[i] + twice[i]) * (d / g.row == m->src / g.row);
        g.sw_drops += d != m->src && !keep[i];
        g.sw_dups += twice[i];
    }
    g.sw_copies += copies;
    m->refs += copies;
    for (int d = first; d < last; d++) {
        int i = d - first;
        if (!keep[i])
            continue;
        if (twice[i])
            f->to[f->n++] = g.mb[d];
        if (opt.reorder > 0 && rng_unit() < opt.reorder) {
            /* delayed in the fabric: packets sent after it may pass it */
            delayed_t *dl = malloc(sizeof(*dl));
            dl->m = m;
            dl->dst = d;
            dl->delay = rng_unit() * opt.reorder_delay;
            sg_actor_t a = sg_actor_init("delay", sg_host_self());
            sg_actor_set_data(a, dl);
            sg_actor_start(a, delayed_main, 0, NULL);
            g.sw_reordered++;
            continue;
        }
        f->to[f->n++] = g.mb[d];
    }
}

/* Star: the one switch ("sw") hands every packet to every other member. */
static void switch_main(int argc, char *argv[])
{
    (void) argc;
    (void) argv;
    sg_mailbox_set_receiver("sw");
    unsigned char *keep = malloc((size_t) opt.nodes), *twice = malloc((size_t) opt.nodes);
    for (;;) {
        msg_t *m = sg_mailbox_get(g.sw);
        int gf, gl;
        group_of(m, &gf, &gl);
        fanout_t *f = fanout_new(m, 2 * opt.nodes);
        to_members(f, m, gf, gl, keep, twice);
        fanout_start(f);
        msg_unref(m);
    }
}

/* Fat tree (IB switches replicate a multicast packet where the group's
 * spanning tree branches, so each link carries it once): leaf switch l
 * ("lsw<l>") hands a packet from one of its members to its other members
 * in the group and, when the group has members under other leaves, sends
 * it once up to the core; a packet from the core goes to all of its
 * members in the group. */
static void leaf_main(int argc, char *argv[])
{
    (void) argc;
    int l = atoi(argv[1]), first = l * opt.leaf, last = leaf_end(l);
    sg_mailbox_set_receiver(sg_mailbox_get_name(g.lsw[l]));
    unsigned char *keep = malloc((size_t) opt.leaf), *twice = malloc((size_t) opt.leaf);
    for (;;) {
        msg_t *m = sg_mailbox_get(g.lsw[l]);
        int gf, gl;
        group_of(m, &gf, &gl);
        fanout_t *f = fanout_new(m, 2 * (last - first) + 1);
        if (m->src >= first && m->src < last && (gf < first || gl > last)) {
            m->refs++;
            f->to[f->n++] = g.sw;
        }
        to_members(f, m, gf > first ? gf : first, gl < last ? gl : last, keep, twice);
        fanout_start(f);
        msg_unref(m);
    }
}

/* The core ("sw") sends each packet once down to every leaf switch with
 * members of its group but the one it came from. */
static void core_main(int argc, char *argv[])
{
    (void) argc;
    (void) argv;
    sg_mailbox_set_receiver("sw");
    for (;;) {
        msg_t *m = sg_mailbox_get(g.sw);
        int from = m->src / opt.leaf, gf, gl;
        group_of(m, &gf, &gl);
        fanout_t *f = fanout_new(m, g.leaves);
        for (int l = 0; l < g.leaves; l++) {
            if (l == from || leaf_end(l) <= gf || l * opt.leaf >= gl)
                continue;
            m->refs++;
            f->to[f->n++] = g.lsw[l];
        }
        fanout_start(f);
        msg_unref(m);
    }
}

/* Broadcast k's data for member `root` of a row: the root's own row's
 * message (its start recorded), a receiver's buffer poisoned. */
static void bcast_begin(node_t * me, int k, int root, unsigned char *buf)
{
    int row = me->base / g.row;
    int msg = row * opt.iters + k;      /* each row's data its own */
    if (me->rank == root) {
        for (uint64_t i = 0; i < opt.size; i++)
            buf[i] = byte_of(msg, i);
        double t = simgrid_get_clock();
        if (g.starts[k]++ == 0 || t < g.t_start[k])
            g.t_start[k] = t;
        g.row_start[row * opt.iters + k] = t;
    } else {
        memset(buf, 0xee, opt.size);
    }
}

/* --coll allreduce: element j of rank r's contribution to iteration k,
 * and the arithmetic sum of them over n ranks */
static double ar_value(int r, int k, int j)
{
    return (double) r + (double) k + 0.1 * j;
}

static double ar_sum(int n, int k, int j)
{
    return (double) n * (n - 1) / 2 + (double) n * k + (double) n * (0.1 * j);
}

/* inout += in, element by element, over len / 8 doubles (the engine's
 * combine; its simulated CPU cost is none, see the header) */
static void ar_combine(void *ctx, const void *in, void *inout, size_t len)
{
    (void) ctx;
    for (size_t i = 0; i + sizeof(double) <= len; i += sizeof(double)) {
        double a, b;
        memcpy(&a, (const unsigned char *) in + i, sizeof(a));
        memcpy(&b, (unsigned char *) inout + i, sizeof(b));
        b += a;
        memcpy((unsigned char *) inout + i, &b, sizeof(b));
    }
}

/* Allreduce k's result at this member: rank 0's bytes (g.ar_total), each
 * element within 1e-9 relative of the arithmetic sum.  A wrong element
 * counts its bytes as bad. */
static void allreduce_check(node_t * me, int k, const unsigned char *buf)
{
    const unsigned char *total = g.ar_total + (size_t) k * opt.size;
    for (int j = 0; j < (int) (opt.size / sizeof(double)); j++) {
        double got, want = ar_sum(g.row, k, j);
        size_t at = (size_t) j * sizeof(double);
        memcpy(&got, buf + at, sizeof(got));
        if (!memcmp(buf + at, total + at, sizeof(double)) && fabs(got - want) <= 1e-9 * fabs(want))
            continue;
        if (!me->bad_bytes) {
            double r0;
            memcpy(&r0, total + at, sizeof(r0));
            fprintf(stderr, "node %d, iteration %d: element %d is %.17g, rank 0's %.17g, "
                    "the sum %.17g\n", me->id, k, j, got, r0, want);
        }
        me->bad_bytes += sizeof(double);
    }
}

/* Broadcast k, entered at t_in, is complete at this member: its time, and
 * every byte a receiver got.  Returns -2 if the root's message had another
 * length. */
static int bcast_end(node_t * me, int k, int root, const unsigned char *buf, double t_in,
                     int mismatch)
{
    int row = me->base / g.row;
    int msg = row * opt.iters + k;
    double *row_end = &g.row_end[row * opt.iters + k];
    if (me->rank != root) {
        g.in_bcast += simgrid_get_clock() - t_in;
        g.in_bcast_n++;
    }
    if (mismatch)
        return -2;
    if (me->rank != root)
        me->frags_expected += ibmc_mcast_nfrags(opt.size, me->ch.payload_max);
    if (opt.coll == COLL_ALLREDUCE)
        allreduce_check(me, k, buf);
    else if (me->rank != root)
        for (uint64_t i = 0; i < opt.size; i++)
            if (buf[i] != byte_of(msg, i)) {
                if (!me->bad_bytes)
                    fprintf(stderr, "node %d, iteration %d: byte %llu is %u, not %u\n",
                            me->id, k, (unsigned long long) i, buf[i], byte_of(msg, i));
                me->bad_bytes++;
            }
    double t = simgrid_get_clock();
    if (me->rank == root)
        g.t_root[k] = t;
    if (t > g.t_end[k])
        g.t_end[k] = t;
    if (t > *row_end)
        *row_end = t;
    if (++g.iter_done[k] == opt.nodes)
        wake_all();             /* the barrier opens */
    return 0;
}

/* --inflight K: the application of MPI_Ibcast and MPI_Wait that keeps K
 * broadcasts outstanding and waits for the oldest.  Each is posted with
 * its data in place (ready) into a buffer of its own, and nothing but the
 * channel's progress turn (ibmc_mcast_chan_progress, as the netmod's
 * progress hook runs it) starts, tests and finishes them; ibmc_mcast_bcast
 * is never called.  A turn that completes nothing takes what has arrived,
 * or sleeps until a message comes or the running broadcast's or the
 * channel's next timer is due (idle_for, with in_bcast set while a posted
 * broadcast runs). */
static int run_posted(node_t * me)
{
    int K = opt.inflight, err = 0, release, posted = 0, done = 0;
    ibmc_mcast_op_t *ops = calloc((size_t) K, sizeof(*ops));
    unsigned char *bufs = malloc((size_t) K * opt.size);
    double *t_post = calloc((size_t) K, sizeof(double));
    if (!ops || !bufs || !t_post) {
        fprintf(stderr, "ibmc_sim: out of memory\n");
        exit(2);
    }
    while (done < opt.iters) {
        /* MPI_Ibcast until K are outstanding */
        while (posted < opt.iters && posted - done < K) {
            int k = posted++, s = k % K, root = opt.rotate ? k % g.row : 0;
            unsigned char *b = bufs + (size_t) s * opt.size;
            bcast_begin(me, k, root, b);
            t_post[s] = simgrid_get_clock();
            ibmc_mcast_op_post(&me->ch, &ops[s], b, opt.size, root, 1);
            int queued = 0;
            for (const ibmc_mcast_op_t * o = me->ch.ops_head; o; o = o->next)
                queued++;
            if (queued > g.posted_max)
                g.posted_max = queued;
        }
        /* MPI_Wait on the oldest: progress turns until it is done */
        if ((err = ibmc_mcast_chan_progress(&me->ch, &release)))
            break;
        int s = done % K;
        if (ibmc_mcast_op_done(&ops[s])) {
            int k = done++;
            if ((err = bcast_end(me, k, opt.rotate ? k % g.row : 0, bufs + (size_t) s * opt.size,
                                 t_post[s], ops[s].mismatch)))
                break;
            continue;
        }
        /* the running broadcast's timers, between its start and finish
         * only (ibmc_mcast_bcast_deadline) */
        me->in_bcast = me->ch.ops_head && me->ch.ops_head->state == IBMC_MCAST_OP_RUNNING;
        err = wait_rest(me);
        me->in_bcast = 0;
        if (err)
            break;
    }
    /* after an error the channel may still queue some of these, but it is
     * only freed from here on, never run */
    free(ops);
    free(bufs);
    free(t_post);
    return err;
}

/* --coll allreduce, iteration k at this member: its contribution, the
 * reduce up the tree to rank 0, then rank 0's broadcast of the total into
 * the same buffer (a receiver's poisoned first), checked by bcast_end. */
static int allreduce_once(node_t * me, int k)
{
    int err;
    double t = simgrid_get_clock();
    if (g.starts[k]++ == 0 || t < g.t_start[k])
        g.t_start[k] = t;
    for (int j = 0; j < (int) (opt.size / sizeof(double)); j++) {
        double v = ar_value(me->rank, k, j);
        memcpy(me->buf + (size_t) j * sizeof(v), &v, sizeof(v));
    }
    if ((err = ibmc_mcast_reduce(&me->ch, opt.fanout, me->buf, opt.size, ar_combine, NULL)))
        return err;
    if (me->rank == 0) {
        g.t_arrive[k] = simgrid_get_clock();
        memcpy(g.ar_total + (size_t) k * opt.size, me->buf, opt.size);
    } else {
        memset(me->buf, 0xee, opt.size);
    }
    double t_in = simgrid_get_clock();
    me->in_bcast = 1;
    err = ibmc_mcast_bcast(&me->ch, me->buf, opt.size, 0);
    me->in_bcast = 0;
    if (err)
        return err;
    return bcast_end(me, k, 0, me->buf, t_in, me->ch.mismatch);
}

static void node_main(int argc, char *argv[])
{
    (void) argc;
    node_t *me = &g.node[atoi(argv[1])];
    int err = 0;

    ibmc_mcast_params_t params = {.window = opt.window,.ack_every = opt.ack_every,
        .subgroup = opt.subgroup,.relay_on_loss = opt.relay_on_loss,
        .nak_timeout_us = opt.nak_timeout_us,
        .nak_max_us = opt.nak_max_us,.rdma_acks = opt.boards
    };
    ibmc_mcast_engine_init(&me->eng, &ops, me, &params, &me->st, NULL);
    /* every row's channel has the same identity, as MPI_Comm_split's
     * disjoint siblings share their context id and epoch */
    if (ibmc_mcast_chan_init(&me->ch, &me->eng, g.row, me->rank, 4,
                             opt.mtu - (uint32_t) sizeof(ibmc_mcast_hdr_t))) {
        fprintf(stderr, "node %d: out of memory\n", me->id);
        me->err = -1;
        g.abort = 1;
        goto out;
    }
    ibmc_mcast_chan_open(&me->ch, 0x5eedfacecafe0001ULL, 7, me->board);
    ibmc_mcast_chan_set_ready(&me->ch);

    if (opt.inflight)
        err = run_posted(me);
    else
        for (int k = 0; k < opt.iters && !err; k++) {
            int root = opt.rotate ? k % g.row : 0;
            if (opt.barrier && k > 0)
                while (g.iter_done[k - 1] < opt.nodes && !(err = op_wait(me)));
            if (err)
                break;
            if (opt.coll == COLL_ALLREDUCE) {
                err = allreduce_once(me, k);
                continue;
            }
            if (opt.coll == COLL_BARRIER) {
                /* MPI_Barrier: the arrivals, then root 0's release below */
                double t = simgrid_get_clock();
                if (g.starts[k]++ == 0 || t < g.t_start[k])
                    g.t_start[k] = t;
                if ((err = ibmc_mcast_arrive(&me->ch, opt.fanout)))
                    break;
                if (me->rank == 0)
                    g.t_arrive[k] = simgrid_get_clock();
            }
            bcast_begin(me, k, root, me->buf);
            /* --mode skew: a receiver arrives uniform 0..skew late (seed 000
             * §6.4); it runs nothing meanwhile, as a computing process */
            if (me->rank != root && opt.mode == MODE_SKEW && opt.skew > 0)
                sg_actor_sleep_for(skew_unit() * opt.skew);
            double t_in = simgrid_get_clock();
            me->in_bcast = 1;
            err = ibmc_mcast_bcast(&me->ch, me->buf, opt.size, root);
            me->in_bcast = 0;
            if (!err)
                err = bcast_end(me, k, root, me->buf, t_in, me->ch.mismatch);
        }
    if (!err) {
        if (++g.finished == opt.nodes)
            wake_all();
        /* keep answering NAKs and relaying until every member is done */
        while (g.finished < opt.nodes && !(err = op_wait(me)));
    }
    if (err) {
        me->err = err;
        g.abort = 1;
        wake_all();
        if (opt.verbose || err != SIM_ERR_ABORT)
            fprintf(stderr, "node %d: error %d at t=%.6f s\n", me->id, err, simgrid_get_clock());
    }
    /* a multicast send still on the wire when its sender's actor ends would
     * fail in the switch that receives it (SimGrid's NetworkFailure) */
    for (; me->sq_n > 0; me->sq_n--, me->sq_head = (me->sq_head + 1) % opt.sq)
        sg_comm_wait(me->sq[me->sq_head]);
    me->relay_served = me->ch.relay.served;
    me->frags_delivered = me->ch.rx.frags_delivered;
    me->foreign = me->ch.rx.count[IBMC_MCAST_RX_FOREIGN];
    me->refused = me->ch.rx.count[IBMC_MCAST_RX_OUT_OF_WINDOW] +
        me->ch.rx.count[IBMC_MCAST_RX_WRONG_SOURCE] + me->ch.rx.count[IBMC_MCAST_RX_MALFORMED] +
        me->ch.rx.count[IBMC_MCAST_RX_MISMATCH] + me->ch.rx.count[IBMC_MCAST_RX_STALE_EPOCH];
    /* in a grid, other rows' packets on a shared group are refused as
     * foreign by design, and main checks those against what the fabric
     * handed over */
    if (!opt.grid)
        me->refused += me->foreign;
  out:
    ibmc_mcast_chan_free(&me->ch);
}

/* --boards: which ranks of a channel some member can write to, into
 * need[0..row-1]: where members send their ACKs (ibmc_mcast_plan_ack_to:
 * the root, or a co-root for its subgroup's leaves) for root 0 or, with
 * --rotate, for every root; and with --coll barrier or allreduce every
 * rank with children in the tree.  The others get no board: nothing would
 * be written into it, and 8,192 nodes' boards are 1 GiB. */
static void boards_needed(unsigned char *need)
{
    ibmc_mcast_params_t pa = {.window = opt.window,.ack_every = opt.ack_every,
        .subgroup = opt.subgroup
    };
    int s = ibmc_mcast_subgroup_size(&pa, g.row);
    for (int root = 0; root < (opt.rotate ? g.row : 1); root++) {
        ibmc_mcast_plan_t p = ibmc_mcast_plan(g.row, s, root);
        for (int m = 0; m < g.row; m++) {
            int to = ibmc_mcast_plan_ack_to(&p, m);
            if (to >= 0)
                need[to] = 1;
        }
    }
    if (opt.coll == COLL_BARRIER || opt.coll == COLL_ALLREDUCE)
        for (int m = 0; m < g.row; m++) {
            int first;
            need[m] |= ibmc_mcast_arrive_children(m, g.row, opt.fanout, &first) > 0;
        }
}

/* ---- the platform ---- */

/* The star: one SimGrid cluster of N hosts, each on a full-duplex link of
 * its own to the cluster's router, with the switch's host behind it. */
static void write_star(FILE * f)
{
    fprintf(f, "<zone id=\"world\" routing=\"Full\">\n"
            "  <cluster id=\"fabric\" prefix=\"n\" suffix=\"\" radical=\"0-%d\" speed=\"1Gf\"\n"
            "           bw=\"%.17gBps\" lat=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\"\n"
            "           router_id=\"fabric_router\"/>\n"
            "  <zone id=\"swzone\" routing=\"Full\">\n"
            "    <host id=\"sw\" speed=\"1Gf\"/>\n"
            "  </zone>\n"
            "  <link id=\"swlink\" bandwidth=\"1e15Bps\" latency=\"0s\" sharing_policy=\"FATPIPE\"/>\n"
            "  <zoneRoute src=\"fabric\" dst=\"swzone\" gw_src=\"fabric_router\" gw_dst=\"sw\"\n"
            "             symmetrical=\"YES\">\n"
            "    <link_ctn id=\"swlink\"/>\n"
            "  </zoneRoute>\n" "</zone>\n", opt.nodes - 1, opt.bw, opt.lat);
}

/* The fat tree, two levels: leaf switch l is a SimGrid cluster of --leaf
 * hosts (each on its own full-duplex link, as in the star); a path between
 * two leaves crosses 4 links, the hosts' and two of the links' latency
 * more (up to the core and down).  The tree is non-blocking: a leaf's
 * uplinks carry what its host links can feed them, so they never limit a
 * flow, and are modelled by their latency only, on a FATPIPE link per
 * pair of leaves (x<i>_<j>).  One uplink link per leaf gave the same
 * simulated time but joins every flow of the leaf into one max-min system,
 * which SimGrid re-solves at each flow's start and end (noderd_sim at 4,096
 * nodes x 4: 7 min 44 s of wall-clock against 37 s on the star).  The core is one
 * switch, as a director-class switch is to its leaves.  Multicast: leaf
 * switch l's actor runs on host lsw<l> (zone lsw<l>z, behind the leaf's
 * router on a FATPIPE of no latency), the core's on host sw; lsw<l> to sw
 * crosses the uplink's latency (up<l>).  SimGrid's FAT_TREE cluster is not
 * used: its routers are not hosts, so nothing could replicate a multicast
 * packet inside the tree.  Routing between the zones is Full, over the
 * routes written here only. */
static void write_fattree(FILE * f)
{
    int leaves = leaf_count();
    fprintf(f, "<zone id=\"world\" routing=\"Full\">\n"
            "  <zone id=\"core\" routing=\"Full\">\n"
            "    <host id=\"sw\" speed=\"1Gf\"/>\n" "  </zone>\n");
    for (int l = 0; l < leaves; l++) {
        fprintf(f, "  <cluster id=\"leaf%d\" prefix=\"n\" suffix=\"\" radical=\"%d-%d\" "
                "speed=\"1Gf\" bw=\"%.17gBps\" lat=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\" "
                "router_id=\"leaf%d_router\"/>\n"
                "  <zone id=\"lsw%dz\" routing=\"Full\">\n"
                "    <host id=\"lsw%d\" speed=\"1Gf\"/>\n" "  </zone>\n",
                l, l * opt.leaf, leaf_end(l) - 1, opt.bw, opt.lat, l, l, l);
    }
    for (int l = 0; l < leaves; l++) {
        fprintf(f, "  <link id=\"lsw%d_link\" bandwidth=\"1e15Bps\" latency=\"0s\" sharing_policy=\"FATPIPE\"/>\n"
                "  <link id=\"up%d\" bandwidth=\"1e15Bps\" latency=\"%.17gs\" sharing_policy=\"FATPIPE\"/>\n",
                l, l, opt.lat);
        for (int j = l + 1; j < leaves; j++)
            fprintf(f, "  <link id=\"x%d_%d\" bandwidth=\"1e15Bps\" latency=\"%.17gs\" sharing_policy=\"FATPIPE\"/>\n",
                    l, j, 2 * opt.lat);
    }
    for (int l = 0; l < leaves; l++) {
        fprintf(f, "  <zoneRoute src=\"leaf%d\" dst=\"lsw%dz\" gw_src=\"leaf%d_router\" gw_dst=\"lsw%d\" symmetrical=\"YES\">"
                "<link_ctn id=\"lsw%d_link\"/></zoneRoute>\n"
                "  <zoneRoute src=\"lsw%dz\" dst=\"core\" gw_src=\"lsw%d\" gw_dst=\"sw\" symmetrical=\"YES\">"
                "<link_ctn id=\"up%d\"/></zoneRoute>\n", l, l, l, l, l, l, l, l);
        for (int j = l + 1; j < leaves; j++)
            fprintf(f, "  <zoneRoute src=\"leaf%d\" dst=\"leaf%d\" gw_src=\"leaf%d_router\" gw_dst=\"leaf%d_router\" symmetrical=\"YES\">"
                    "<link_ctn id=\"x%d_%d\"/></zoneRoute>\n", l, j, l, j, l, j);
    }
    fprintf(f, "</zone>\n");
}

static void write_platform(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(2);
    }
    fprintf(f, "<?xml version='1.0'?>\n"
            "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            "<platform version=\"4.1\">\n");
    if (opt.topology == TOPO_FATTREE)
        write_fattree(f);
    else
        write_star(f);
    fprintf(f, "</platform>\n");
    fclose(f);
}

/* ---- main ---- */

static void usage(void)
{
    fprintf(stderr,
            "usage: ibmc_sim --nodes N --size BYTES --iters K [--loss P] [--dup P] [--reorder P [--reorder-us D]] [--seed S]\n"
            "       [--window W] [--ack-every M] [--subgroup S] [--relay on-loss|always] [--mtu 4096] [--rotate]\n"
            "       [--no-barrier] [--bw B/s] [--lat s] [--cpu-per-pkt us] [--poll-us us]\n"
            "       [--sq D] [--max-time s] [--nak-timeout-us T] [--nak-max-us T] [--verbose]\n"
            "       [--mode latency|rate|skew] [--skew-us S] [--platform-out FILE [--platform-only]]\n"
            "       [--topology auto|star|fattree] [--leaf K] [--grid R [--groups shared|separate]]\n"
            "       [--inflight K (with --mode rate)] [--boards] [--coll bcast|barrier|allreduce [--fanout F]]\n");
    exit(2);
}

/* An actor on host <prefix><i>, named so or `name`, with argv {name, i}. */
static sg_actor_t start_on(const char *prefix, int i, const char *name,
                           void (*code)(int, char **))
{
    char host[32], id[16];
    snprintf(host, sizeof(host), "%s%d", prefix, i);
    snprintf(id, sizeof(id), "%d", i);
    char *av[] = { (char *) (name ? name : host), id, NULL };
    return sg_actor_create(av[0], sg_host_by_name(host), code, 2, av);
}

/* the index of v in names[0..n-1], or usage */
static int choose(const char *v, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i]))
            return i;
    usage();
    return -1;
}

static double elapsed(const struct timespec *a)
{
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double) (b.tv_sec - a->tv_sec) + 1e-9 * (double) (b.tv_nsec - a->tv_nsec);
}

int main(int argc, char *argv[])
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (!strcmp(a, name) && v && ++i)
        if (ARG("--nodes"))
            opt.nodes = atoi(v);
        else if (ARG("--size")) {
            opt.size = strtoull(v, NULL, 0);
            opt.size_set = 1;
        }
        else if (ARG("--iters"))
            opt.iters = atoi(v);
        else if (ARG("--loss"))
            opt.loss = atof(v);
        else if (ARG("--dup"))
            opt.dup = atof(v);
        else if (ARG("--reorder"))
            opt.reorder = atof(v);
        else if (ARG("--reorder-us"))
            opt.reorder_delay = atof(v) * 1e-6;
        else if (ARG("--seed"))
            opt.seed = strtoull(v, NULL, 0);
        else if (ARG("--window"))
            opt.window = (uint32_t) atoi(v);
        else if (ARG("--ack-every"))
            opt.ack_every = (uint32_t) atoi(v);
        else if (ARG("--subgroup"))
            opt.subgroup = atoi(v);
        else if (ARG("--relay")) {
            if (strcmp(v, "on-loss") && strcmp(v, "always"))
                usage();
            opt.relay_on_loss = !strcmp(v, "on-loss");
        }
        else if (ARG("--mtu"))
            opt.mtu = (uint32_t) atoi(v);
        else if (ARG("--bw"))
            opt.bw = atof(v);
        else if (ARG("--lat"))
            opt.lat = atof(v);
        else if (ARG("--cpu-per-pkt"))
            opt.cpu = atof(v) * 1e-6;
        else if (ARG("--poll-us"))
            opt.poll = atof(v) * 1e-6;
        else if (ARG("--sq"))
            opt.sq = atoi(v);
        else if (ARG("--max-time"))
            opt.max_time = atof(v);
        else if (ARG("--nak-timeout-us"))
            opt.nak_timeout_us = (uint32_t) atoi(v);
        else if (ARG("--nak-max-us"))
            opt.nak_max_us = (uint32_t) atoi(v);
        else if (!strcmp(a, "--rotate"))
            opt.rotate = 1;
        else if (!strcmp(a, "--no-barrier"))
            opt.barrier = 0;
        else if (!strcmp(a, "--verbose"))
            opt.verbose = 1;
        else if (ARG("--platform-out"))
            opt.platform_out = v;
        else if (!strcmp(a, "--platform-only"))
            opt.platform_only = 1;
        else if (ARG("--topology"))
            opt.topology = choose(v, topo_name, 3);
        else if (ARG("--leaf"))
            opt.leaf = atoi(v);
        else if (ARG("--skew-us"))
            opt.skew = atof(v) * 1e-6;
        else if (ARG("--mode"))
            opt.mode = choose(v, mode_name, 3);
        else if (ARG("--grid"))
            opt.grid = atoi(v);
        else if (ARG("--groups"))
            opt.groups_shared = choose(v, groups_name, 2);
        else if (ARG("--inflight"))
            opt.inflight = atoi(v);
        else if (!strcmp(a, "--boards"))
            opt.boards = 1;
        else if (ARG("--coll"))
            opt.coll = choose(v, coll_name, 3);
        else if (ARG("--fanout"))
            opt.fanout = atoi(v);
        else
            usage();
#undef ARG
    }
    if (opt.nodes < 2 || opt.size < 1 || opt.iters < 1 || opt.sq < 1 || opt.poll <= 0 ||
        opt.mtu <= sizeof(ibmc_mcast_hdr_t) || opt.mtu > 65535 || opt.loss < 0 || opt.loss >= 1 ||
        opt.dup < 0 || opt.dup > 1 || opt.reorder < 0 || opt.reorder > 1 ||
        opt.window < 1 || (opt.window & (opt.window - 1)) || opt.window > IBMC_MCAST_WINDOW_MAX ||
        (opt.ack_every & (opt.ack_every - 1)) || opt.ack_every > opt.window || opt.leaf < 1)
        usage();
    if (opt.topology == TOPO_AUTO)
        opt.topology = opt.nodes > STAR_MAX ? TOPO_FATTREE : TOPO_STAR;
    rng_state = opt.seed;
    skew_state = opt.seed ^ 0x5ce35ce35ce35ce3ULL;
    if (opt.mode == MODE_RATE)
        opt.barrier = 0;        /* back-to-back broadcasts */
    if (opt.mode == MODE_SKEW)
        opt.barrier = 1;        /* barrier, delay, broadcast */
    if (opt.skew < 0 || (opt.skew > 0 && opt.mode != MODE_SKEW) ||
        (opt.platform_only && !opt.platform_out))
        usage();
    if (opt.grid < 0 || (opt.grid && (opt.nodes % opt.grid || opt.nodes / opt.grid < 2)) ||
        (opt.groups_shared && !opt.grid))
        usage();
    g.row = opt.grid ? opt.nodes / opt.grid : opt.nodes;
    if (opt.inflight < 0)
        usage();
    if (opt.inflight > 0 && opt.mode != MODE_RATE) {
        /* latency and skew time one broadcast at a time, after a barrier:
         * with several outstanding there is no such broadcast to time */
        fprintf(stderr, "ibmc_sim: --inflight %d needs --mode rate (latency and skew modes "
                "time one broadcast at a time; use --inflight 0 for them)\n", opt.inflight);
        return 2;
    }
    /* a barrier is timed as latency mode times a broadcast: one at a time,
     * every node of one channel entering together; its release is one
     * byte from rank 0 */
    if (opt.coll == COLL_BARRIER && (opt.mode != MODE_LATENCY || opt.grid || opt.rotate ||
                                     opt.size != 1 || opt.fanout < 2))
        usage();
    /* a small allreduce: the same, its result S bytes from rank 0; above
     * IBMC_MCAST_PARTIAL_BYTES MPIR runs its k-nomial reduce instead, which
     * this does not simulate */
    if (opt.coll == COLL_ALLREDUCE) {
        if (!opt.size_set)
            opt.size = 8;
        if (opt.size % 8 || opt.size > IBMC_MCAST_PARTIAL_BYTES) {
            fprintf(stderr, "ibmc_sim: --coll allreduce takes --size 8 to %d, a multiple of 8 "
                    "(doubles; larger results go the k-nomial way, not simulated here)\n",
                    IBMC_MCAST_PARTIAL_BYTES);
            return 2;
        }
        if (opt.mode != MODE_LATENCY || opt.grid || opt.rotate || opt.fanout < 2 ||
            opt.fanout > IBMC_MCAST_PARTIAL_SLOTS)
            usage();
    }

    /* SimGrid: plain max-min sharing with the links' own figures (CM02, no
     * latency or bandwidth correction factors, no reverse ACK traffic). */
    char *sg_argv[] = { argv[0], "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
        "--cfg=contexts/stack-size:256", "--log=root.thresh:warning", NULL
    };
    int sg_argc = 5;
    if (opt.platform_out)
        write_platform(opt.platform_out);
    if (opt.platform_only)
        return 0;
    simgrid_init(&sg_argc, sg_argv);

    char plat[] = "/tmp/ibmc_sim_platform_XXXXXX";
    int fd = mkstemp(plat);
    if (fd < 0) {
        perror("mkstemp");
        return 2;
    }
    close(fd);
    write_platform(plat);
    simgrid_load_platform(plat);
    unlink(plat);

    g.node = calloc((size_t) opt.nodes, sizeof(node_t));
    g.mb = calloc((size_t) opt.nodes, sizeof(sg_mailbox_t));
    g.t_start = calloc((size_t) opt.iters, sizeof(double));
    g.t_end = calloc((size_t) opt.iters, sizeof(double));
    g.t_root = calloc((size_t) opt.iters, sizeof(double));
    g.t_arrive = calloc((size_t) opt.iters, sizeof(double));
    if (opt.coll == COLL_ALLREDUCE)
        g.ar_total = calloc((size_t) opt.iters, opt.size);
    g.iter_done = calloc((size_t) opt.iters, sizeof(int));
    g.starts = calloc((size_t) opt.iters, sizeof(int));
    g.row_start = calloc((size_t) (opt.nodes / g.row) * (size_t) opt.iters, sizeof(double));
    g.row_end = calloc((size_t) (opt.nodes / g.row) * (size_t) opt.iters, sizeof(double));
    g.sw = sg_mailbox_by_name("sw");
    if (opt.topology == TOPO_FATTREE) {
        g.leaves = leaf_count();
        g.lsw = calloc((size_t) g.leaves, sizeof(sg_mailbox_t));
        for (int l = 0; l < g.leaves; l++) {
            char name[32];
            snprintf(name, sizeof(name), "lsw%d", l);
            g.lsw[l] = sg_mailbox_by_name(name);
        }
    }
    for (int i = 0; i < opt.nodes; i++) {
        char name[32];
        snprintf(name, sizeof(name), "n%d", i);
        g.mb[i] = sg_mailbox_by_name(name);
        node_t *n = &g.node[i];
        n->id = i;
        n->rank = i % g.row;
        n->base = i - n->rank;
        n->buf = malloc(opt.size);
        n->sq = calloc((size_t) opt.sq, sizeof(sg_comm_t));
        n->mb = g.mb[i];
        n->up = opt.topology == TOPO_FATTREE ? g.lsw[i / opt.leaf] : g.sw;
        n->wake = sg_sem_init(0);
        if (!n->buf || !n->sq) {
            fprintf(stderr, "ibmc_sim: out of memory\n");
            return 2;
        }
    }
    size_t boards = 0;
    if (opt.boards) {
        unsigned char *need = calloc((size_t) g.row, 1);
        if (!need) {
            fprintf(stderr, "ibmc_sim: out of memory\n");
            return 2;
        }
        boards_needed(need);
        for (int i = 0; i < opt.nodes; i++) {
            if (!need[g.node[i].rank])
                continue;
            /* the engine clears its words (ibmc_mcast_chan_open); zeroed
             * here for the partial results' slots, which it does not */
            g.node[i].board = calloc(IBMC_MCAST_BOARD_WORDS(g.row), sizeof(uint64_t));
            if (!g.node[i].board) {
                fprintf(stderr, "ibmc_sim: out of memory\n");
                return 2;
            }
            boards++;
        }
        free(need);
    }
    if (opt.topology == TOPO_FATTREE) {
        sg_actor_daemonize(sg_actor_create("core", sg_host_by_name("sw"), core_main, 0, NULL));
        for (int l = 0; l < g.leaves; l++)
            sg_actor_daemonize(start_on("lsw", l, NULL, leaf_main));
    }
    else
        sg_actor_daemonize(sg_actor_create("switch", sg_host_by_name("sw"), switch_main, 0, NULL));
    for (int i = 0; i < opt.nodes; i++) {
        start_on("n", i, NULL, node_main);
        sg_actor_daemonize(start_on("n", i, "receiver", receiver_main));
    }
    simgrid_run();

    /* results */
    int fail = 0;
    ibmc_mcast_stats_t sum;
    memset(&sum, 0, sizeof(sum));
    unsigned long long root_pkts = 0, served = 0, bad = 0, recoveries = 0, rec_worst = 0,
        rec_sum = 0, msgs = 0;
    for (int i = 0; i < opt.nodes; i++) {
        const node_t *n = &g.node[i];
        const ibmc_mcast_stats_t *s = &n->st;
        fail |= n->err != 0;
        bad += n->bad_bytes;
        /* every member delivered every fragment exactly once, and no
         * correct packet was refused (beyond the window, or otherwise) */
        if (!n->err && (n->frags_delivered != n->frags_expected || n->refused)) {
            fprintf(stderr, "node %d: %llu fragments delivered of %llu, %llu correct packets "
                    "refused\n", i, (unsigned long long) n->frags_delivered,
                    (unsigned long long) n->frags_expected, (unsigned long long) n->refused);
            fail = 1;
        }
        sum.naks_sent += s->naks_sent;
        sum.retransmits += s->retransmits;
        sum.acks_sent += s->acks_sent;
        sum.relays += s->relays;
        sum.coroot_acks += s->coroot_acks;
        sum.tree_acks += s->tree_acks;
        sum.dropped += s->dropped;
        sum.duplicates += s->duplicates;
        sum.ack_probes += s->ack_probes;
        sum.bcasts += s->bcasts;
        recoveries += s->recoveries;
        rec_sum += s->recovery_us;
        msgs += n->handled + n->sent;
        if (s->recovery_worst_us > rec_worst)
            rec_worst = s->recovery_worst_us;
        root_pkts += s->pkts_sent;      /* only roots post */
        served += n->relay_served;
    }
    fail |= bad != 0;
    int complete = 1;
    double lat = 0;
    for (int k = 0; k < opt.iters; k++) {
        complete &= g.iter_done[k] == opt.nodes;
        lat += g.t_end[k] - g.t_start[k];
    }
    fail |= !complete;
    lat = lat / opt.iters * 1e6;
    double span = (g.t_end[opt.iters - 1] - g.t_start[0]) * 1e6;
    char grid[512] = "";
    if (opt.grid) {
        /* per node and per broadcast of its row: the multicast packets the
         * fabric sent it, its row's and the other rows' (those still in
         * flight or unread when the last member finished included).  Every
         * other row's packet a channel was handed must have been refused as
         * foreign, and with a group a row the fabric sends none. */
        unsigned long long in = 0, own = 0, taken = 0, foreign = 0;
        for (int i = 0; i < opt.nodes; i++) {
            in += g.node[i].mc_in;
            own += g.node[i].mc_own;
            taken += g.node[i].taken_other;
            foreign += g.node[i].foreign;
        }
        if (foreign != taken || (!opt.groups_shared && (in != own || foreign))) {
            fprintf(stderr, "grid: %llu packets of other rows received, %llu handed to a channel, "
                    "%llu refused as foreign (groups %s)\n", in - own, taken, foreign,
                    groups_name[opt.groups_shared]);
            fail = 1;
        }
        double row_lat = 0, per = (double) opt.nodes * opt.iters;
        for (int r = 0; r < opt.grid; r++)
            for (int k = 0; k < opt.iters; k++)
                row_lat += g.row_end[r * opt.iters + k] - g.row_start[r * opt.iters + k];
        row_lat = row_lat / ((double) opt.grid * opt.iters) * 1e6;
        snprintf(grid, sizeof(grid), " grid=%dx%d groups=%s row_lat_us=%.3f "
                 "grid_bcasts_per_s=%.1f mcast_in_per_bcast=%.2f own_per_bcast=%.2f "
                 "foreign_per_bcast=%.2f foreign_refused=%llu", opt.grid, g.row,
                 groups_name[opt.groups_shared], row_lat,
                 span > 0 ? (double) opt.grid * opt.iters / (span * 1e-6) : 0.0,
                 (double) in / per, (double) own / per, (double) (in - own) / per, foreign);
    }
    if (opt.verbose)
        for (int k = 0; k < opt.iters; k++)
            fprintf(stderr, "iteration %d: root start %.3f us, last member done %.3f us, root done %.3f us\n",
                    k, g.t_start[k] * 1e6, g.t_end[k] * 1e6, g.t_root[k] * 1e6);
    if (opt.verbose) {
        int busiest = 0;
        for (int i = 1; i < opt.nodes; i++)
            if (g.node[i].handled + g.node[i].sent >
                g.node[busiest].handled + g.node[busiest].sent)
                busiest = i;
        fprintf(stderr, "node 0: %llu messages in, %llu out; busiest node %d: %llu in, %llu out\n",
                (unsigned long long) g.node[0].handled, (unsigned long long) g.node[0].sent,
                busiest, (unsigned long long) g.node[busiest].handled,
                (unsigned long long) g.node[busiest].sent);
    }
    double in_bcast = g.in_bcast_n ? g.in_bcast / (double) g.in_bcast_n * 1e6 : 0;
    char posted[64] = "";
    if (opt.inflight)
        snprintf(posted, sizeof(posted), " inflight=%d posted_max=%d", opt.inflight, g.posted_max);
    /* --boards, --coll barrier or allreduce: per call, what rank 0 and the
     * average other member did; a word read is one the engine found
     * changed.  The barrier's fields end _per_bar, the allreduce's
     * _per_call. */
    char bar[640] = "";
    if (opt.boards || opt.coll != COLL_BCAST) {
        unsigned long long aw = 0, as = 0, acw = 0, words = 0, wr = 0, rin = 0, rout = 0,
            dw = 0, din = 0;
        for (int i = 0; i < opt.nodes; i++) {
            aw += g.node[i].st.arrivals_written;
            as += g.node[i].st.arrivals_sent;
            acw += g.node[i].st.acks_written;
            words += g.node[i].words_in;
            din += g.node[i].data_in;
            if (i > 0) {
                wr += g.node[i].writes;
                dw += g.node[i].data_writes;
                rin += g.node[i].rc_in;
                rout += g.node[i].rc_out;
            }
        }
        const node_t *r = &g.node[0];
        double per = (double) opt.iters, mper = (double) (opt.nodes - 1) * opt.iters, arr = 0;
        for (int k = 0; k < opt.iters; k++)
            arr += g.t_arrive[k] - g.t_start[k];
        int o = snprintf(bar, sizeof(bar), " boards=%zu acks_written=%llu words_written=%llu",
                         boards, acw, words);
        if (opt.coll == COLL_ALLREDUCE)
            o += snprintf(bar + o, sizeof(bar) - (size_t) o, " data_written=%llu", din);
        if (opt.coll != COLL_BCAST) {
            const char *pc = opt.coll == COLL_BARRIER ? "bar" : "call";
            o += snprintf(bar + o, sizeof(bar) - (size_t) o, " coll=%s fanout=%d arrive_us=%.3f "
                          "arrivals_sent=%llu arrivals_written=%llu root_words_read_per_%s=%.2f "
                          "root_rc_in_per_%s=%.2f root_rc_out_per_%s=%.2f root_posts_per_%s=%.2f "
                          "member_writes_per_%s=%.3f member_rc_out_per_%s=%.3f "
                          "member_rc_in_per_%s=%.3f", coll_name[opt.coll], opt.fanout,
                          arr / per * 1e6, as, aw,
                          pc, (double) (r->st.arrivals_read + r->st.acks_read) / per,
                          pc, (double) r->rc_in / per, pc, (double) r->rc_out / per,
                          pc, (double) r->posts / per, pc, (double) wr / mper,
                          pc, (double) rout / mper, pc, (double) rin / mper);
        }
        if (opt.coll == COLL_ALLREDUCE)
            snprintf(bar + o, sizeof(bar) - (size_t) o, " member_data_writes_per_call=%.3f", dw / mper);
    }
    printf("SIMULATED nodes=%d size=%llu iters=%d loss=%g seed=%llu window=%u ack_every=%u "
           "subgroup=%d relay=%s topology=%s mode=%s skew_us=%g%s%s%s mean_lat_us=%.3f span_us=%.3f bcasts_per_s=%.1f "
           "mean_in_bcast_us=%.3f naks_sent=%llu retransmits=%llu "
           "acks_sent=%llu relays=%llu coroot_acks=%llu tree_acks=%llu coroot_served=%llu "
           "dropped=%llu duplicates=%llu ack_probes=%llu recoveries=%llu recovery_mean_us=%.1f "
           "recovery_worst_us=%llu root_in_per_bcast=%.2f root_out_per_bcast=%.2f msgs=%llu "
           "root_pkts_sent=%llu switch_copies=%llu switch_drops=%llu switch_dups=%llu "
           "switch_reordered=%llu bad_bytes=%llu sim_end_s=%.6f wall_s=%.2f result=%s\n",
           opt.nodes, (unsigned long long) opt.size, opt.iters, opt.loss,
           (unsigned long long) opt.seed, opt.window, opt.ack_every,
           ibmc_mcast_subgroup_size(&(ibmc_mcast_params_t) {.window = opt.window,
                                    .ack_every = opt.ack_every,.subgroup = opt.subgroup},
                                    g.row), opt.relay_on_loss ? "on-loss" : "always",
           topo_name[opt.topology],
           mode_name[opt.mode], opt.skew * 1e6, posted, grid, bar, lat, span,
           span > 0 ? opt.iters / (span * 1e-6) : 0.0, in_bcast, sum.naks_sent, sum.retransmits,
           sum.acks_sent, sum.relays, sum.coroot_acks, sum.tree_acks, served, sum.dropped,
           sum.duplicates, sum.ack_probes, recoveries, recoveries ? (double) rec_sum / (double) recoveries : 0.0,
           rec_worst, (double) g.node[0].handled / opt.iters, (double) g.node[0].sent / opt.iters,
           msgs,
           root_pkts,
           (unsigned long long) g.sw_copies, (unsigned long long) g.sw_drops,
           (unsigned long long) g.sw_dups, (unsigned long long) g.sw_reordered, bad,
           simgrid_get_clock(), elapsed(&t0), fail ? "FAIL" : "ok");
    for (int i = 0; i < opt.nodes; i++) {
        free(g.node[i].buf);
        free(g.node[i].sq);
        for (size_t j = 0; j < g.node[i].in_n; j++) {
            msg_t *m = g.node[i].inbox[(g.node[i].in_head + j) % g.node[i].in_cap];
            if (m->kind == MSG_MCAST)
                msg_unref(m);
            else
                free(m);
        }
        free(g.node[i].inbox);
        free(g.node[i].board);
        sg_sem_destroy(g.node[i].wake);
    }
    free(g.node);
    free(g.mb);
    free(g.lsw);
    free(g.t_start);
    free(g.t_end);
    free(g.t_root);
    free(g.t_arrive);
    free(g.ar_total);
    free(g.iter_done);
    free(g.starts);
    free(g.row_start);
    free(g.row_end);
    return fail ? 1 : 0;
}
