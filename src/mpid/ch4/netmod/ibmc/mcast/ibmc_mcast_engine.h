/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The multicast channel's protocol engine: every decision of one
 * communicator's reliable multicast stream, with no verbs, no MPICH and no
 * clock of its own.  It drives the pure parts (the receive window of
 * ibmc_mcast_rx.h, the root's ring and flow control of ibmc_mcast_tx.h,
 * co-roots of ibmc_mcast_coroot.h, the ACK board of ibmc_mcast_board.h)
 * and decides:
 *   - delivery of multicast packets, retransmissions and relays, and which
 *     RC copies to believe (the co-root plan);
 *   - the skewed ACK schedule, ACKs as RDMA writes or RC messages, and
 *     co-roots' aggregated ACKs;
 *   - NAKs of gaps and of stalls, with the adaptive NAK timeout;
 *   - answers to NAKs from the root's ring or a co-root's store;
 *   - the root's send loop under the window, relays to co-roots, and asking
 *     laggards when the window stays full;
 *   - retiring a channel whose communicator is gone.
 *
 * It reaches the world only through ibmc_mcast_ops_t: multicast a packet,
 * send an RC message, write an ACK word, the time, one turn of progress.
 * The netmod implements the table with verbs (ibmc_mcast_io.c), the host
 * tests with a fake network (test/unit/test_mcast_sim.c,
 * test_mcast_engine.c), the simulator with SimGrid (bench/sim/ibmc_sim.c).  The design, with the seed sections it
 * follows, is doc/design.md's "Multicast channel".
 *
 * Errors: an op returns 0 or an error code of its own (the netmod's: an MPI
 * error code); the engine stops at the first and returns it unchanged. */

#ifndef IBMC_MCAST_ENGINE_H_INCLUDED
#define IBMC_MCAST_ENGINE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "ibmc_mcast_wire.h"
#include "ibmc_mcast_rx.h"
#include "ibmc_mcast_tx.h"
#include "ibmc_mcast_coroot.h"
#include "ibmc_mcast_board.h"
#include "ibmc_mcast_faults.h"

/* Counts of the channel's work, for the whole process (the netmod exports
 * them as the ibmc_mcast_* pvars, ibmc_pvars.c). */
typedef struct {
    unsigned long long bcasts;  /* broadcasts that went over multicast, as root or not */
    unsigned long long bcasts_posted;   /* ... of them posted (MPI_Ibcast, MPI_Start)
                                         * rather than blocking (netmod) */
    unsigned long long pkts_sent;       /* multicast sends posted (one per fragment) */
    unsigned long long post_calls;      /* doorbells: ibv_post_send calls for them */
    unsigned long long send_cqes;       /* completions of multicast sends (selectively
                                         * signaled: one covers several) */
    unsigned long long bytes_sent;
    unsigned long long pkts_recvd;      /* multicast packets received (the I/O side counts) */
    unsigned long long acks_sent;       /* over RC or as RDMA writes */
    unsigned long long acks_written;    /* ... of them as RDMA writes into a board */
    unsigned long long acks_read;       /* ACKs this process found on its boards */
    unsigned long long acks_foreign;    /* board words of another epoch, asked again */
    unsigned long long naks_sent;       /* NAK messages sent (each names a range) */
    unsigned long long naks_asked;      /* ... of them for losses an ACK request revealed:
                                         * the message's root had sent packets that had
                                         * not come, all of the message or its tail */
    unsigned long long naks_spared;     /* NAK timeouts after which one more poll found
                                         * the data: no NAK went */
    unsigned long long naks_premature;  /* timeout NAKs whose data then came by multicast:
                                         * each doubles the channel's NAK timeout */
    unsigned long long naks_deferred;   /* NAK timeouts that ran out while this process
                                         * was not running: no NAK went, and the
                                         * channel's NAK timeout rose to twice the stall */
    unsigned long long retransmits;     /* packets sent again over RC for NAKs */
    unsigned long long ack_probes;      /* ACK requests a root sent to the members holding
                                         * back its window or its last packets, or a
                                         * co-root to its subtree's */
    unsigned long long asks_multicast;  /* ... of them one multicast packet to the whole
                                         * group instead of an RC message to each */
    unsigned long long relays;  /* packets sent over RC to co-roots */
    unsigned long long arrivals_sent;   /* barrier arrivals reported to a parent
                                         * (ibmc_mcast_arrive.h), a subtree's each */
    unsigned long long arrivals_written;        /* ... of them as RDMA writes into a board */
    unsigned long long arrivals_read;   /* children's arrivals this process found on its board */
    unsigned long long coroot_acks;     /* ACKs sent as a co-root, for a subtree */
    unsigned long long tree_acks;       /* ... of them to a parent co-root, by RC */
    unsigned long long copies;  /* fragment payloads copied: a receiver's into the
                                 * posted buffer or a slot (and out of the slot when its
                                 * broadcast is posted), a root's into its ring, a
                                 * co-root's into its relay ring */
    unsigned long long in_place;        /* fragments the device wrote at their place in
                                         * the posted buffer: no copy (netmod) */
    unsigned long long place_armed;     /* broadcasts whose receives went to their places */
    unsigned long long place_ended;     /* of those, ended early or at the end with
                                         * receives still posted, taken back */
    unsigned long long place_recvd;     /* packets the in-place queues received (netmod) */
    unsigned long long place_refused;   /* MPI_Bcast_init buffers received by copies: no
                                         * in-place receiver could be made (netmod) */
    unsigned long long place_strays;    /* packets not of the armed broadcast that took one
                                         * of its receives */
    unsigned long long place_moved;     /* fragments that came behind one, moved to their
                                         * place (a copy, counted in copies) */
    unsigned long long shadowed;        /* the main queue's twins of those broadcasts'
                                         * fragments, dropped (IBMC_MCAST_RX_SHADOWED) */
    unsigned long long duplicates;      /* packets dropped as already delivered or held */
    unsigned long long echoes;  /* this process's own multicast packets looped back to it
                                 * (the I/O side drops them) */
    unsigned long long dropped; /* foreign, stale, malformed, wrong-source, out-of-window */
    unsigned long long foreign; /* ... of them another job's or communicator's (a channel
                                 * sharing the group; counted by the I/O side too when
                                 * no channel of this process has the packet's identity) */
    unsigned long long faults;  /* packets the fault injector dropped (the I/O side) */
    unsigned long long recoveries;      /* received broadcasts that needed a NAK */
    unsigned long long recovery_us;     /* their time from first NAK to complete, summed */
    unsigned long long recovery_worst_us;       /* and the longest */
    unsigned long long fallbacks;       /* broadcasts that ran a stock algorithm (netmod) */
    unsigned long long groups;  /* multicast groups this process is in now (netmod) */
    unsigned long long group_swaps;     /* idle groups left to join another (netmod) */
    unsigned long long groups_shared;   /* channels set up on a group another channel of
                                         * this process uses (netmod) */
    unsigned long long boards;  /* ACK boards it has registered (netmod) */
    unsigned long long loopback_blocked;        /* 1: its multicast QP does not receive its
                                                 * own sends (netmod) */
} ibmc_mcast_stats_t;

/* A packet a co-root kept (its relay ring's copy) and relays at its next
 * turn. */
typedef struct {
    const void *pkt;
    size_t len;
    int root;
} ibmc_mcast_relay_due_t;

typedef struct ibmc_mcast_chan ibmc_mcast_chan_t;

/* inout = in (op) inout over len bytes: a small allreduce's operation
 * (ibmc_mcast_reduce_start), which must be commutative. */
typedef void (*ibmc_mcast_combine_fn)(void *ctx, const void *in, void *inout, size_t len);

/* What the engine asks of its world.  io is ibmc_mcast_engine_t's. */
typedef struct {
    /* Multicast one packet of c's stream to c's group: queued until
     * flush(), which sends every queued packet at once.  The packet stays
     * in c's ring until a window later, after its send has completed. */
    int (*post)(void *io, ibmc_mcast_chan_t * c, const void *pkt, size_t len);
    int (*flush)(void *io, ibmc_mcast_chan_t * c);
    /* Multicast a control packet of at most sizeof(ibmc_mcast_hdr_t) bytes
     * to c's group now, its bytes taken at the call (the packet is not in
     * the ring).  *sent = 0, with 0 returned, when it cannot go that way now
     * (the device cannot send it inline, no send queue room): the engine
     * sends RC messages instead.  NULL: never. */
    int (*post_ctl)(void *io, ibmc_mcast_chan_t * c, const void *pkt, size_t len, int *sent);
    /* How many more packets post() can take now (0: none until sends
     * complete). */
    int (*post_room)(void *io, ibmc_mcast_chan_t * c);
    /* One RC message to member `to`: h (context id and epoch filled in by
     * the engine), then len bytes of a multicast packet pkt (none for 0)
     * whose copy gets pkt_flags added to its header's flags. */
    int (*send_rc)(void *io, ibmc_mcast_chan_t * c, int to, const ibmc_mcast_rc_t * h,
                   const void *pkt, size_t len, uint16_t pkt_flags);
    /* Write word (ibmc_mcast_board_word) into this member's word of member
     * `to`'s board `which` (IBMC_MCAST_BOARD_ACKS or _ARRIVALS: the owner's
     * board holds c->size words of each, in that order), in order after
     * every RC message already sent to `to`.  *written = 0, with 0
     * returned, when it cannot go that way now (no board, not connected,
     * sends queued, no room): the engine sends an RC message instead. */
    int (*write_board)(void *io, ibmc_mcast_chan_t * c, int to, int which, uint64_t word,
                       int *written);
    /* Write len bytes (at most IBMC_MCAST_PARTIAL_BYTES) into member `to`'s
     * board at byte offset `offset`, in order after every RC message and
     * write already sent to `to`, so that a write_board after it lands
     * after it.  Its bytes are taken at the call.  *written = 0 as for
     * write_board; NULL: never. */
    int (*write_data)(void *io, ibmc_mcast_chan_t * c, int to, size_t offset, const void *data,
                      size_t len, int *written);
    /* Seconds on a monotonic clock. */
    double (*now)(void *io);
    /* One turn of progress while a broadcast waits: packets and RC
     * messages come in through ibmc_mcast_mcast_in and ibmc_mcast_rc_in;
     * it may give the processor away.  poll is one pass that does not. */
    int (*wait)(void *io);
    int (*poll)(void *io);
    /* Zeroed memory for a channel's state, and its release. */
    void *(*zalloc)(void *io, size_t bytes);
    void (*free)(void *io, void *p);
    /* Receiving in place (NULL: never), for an op whose caller gave it a
     * place (ibmc_mcast_op_t): the I/O side's receiver for its buffer.
     * place_arm: receive the posted message, len bytes in nfrags fragments
     * at buf, straight into buf: *armed = 1 when the I/O side posted, in
     * order, one receive per fragment whose payload goes to that
     * fragment's place, on a queue of its own that gets every packet of
     * the channel's group beside the main one; it then hands each of those
     * completions, in order, to ibmc_mcast_placed_in.  place_disarm: take
     * back every receive still posted, so that no device write into buf
     * follows; a completion not yet handed over is dropped (its twin on
     * the main queue, or a NAK, brings the packet). */
    int (*place_arm)(void *io, ibmc_mcast_chan_t * c, void *place, void *buf, uint64_t len,
                     uint32_t nfrags, int *armed);
    int (*place_disarm)(void *io, ibmc_mcast_chan_t * c, void *place);
} ibmc_mcast_ops_t;

/* Settings every member of a channel must share, except nak_timeout_us and
 * rdma_acks (the netmod's MPIR_CVAR_IBMC_MCAST_* CVARs). */
typedef struct {
    uint32_t window;            /* a power of two */
    uint32_t ack_every;         /* 0 or a power of two up to window */
    int subgroup;               /* members per co-root subgroup; 0: from the model */
    uint32_t nak_timeout_us;    /* the NAK timeout's floor */
    uint32_t nak_max_us;        /* its ceiling, and the laggard probes' longest interval */
    int rdma_acks;              /* try write_board before an RC message: ACKs, arrivals */
    int relay_on_loss;          /* co-roots get by RC only what multicast lost them:
                                 * they NAK their parent like a leaf its head,
                                 * instead of getting every packet relayed */
    uint32_t clock_every;       /* a waiting receiver, or a root whose last packets
                                 * wait for ACKs, reads the clock once every this
                                 * many turns in which nothing moved (0 or 1: every
                                 * turn); a turn that moved reads it always.  Its
                                 * timers act up to this many idle turns late. */
} ibmc_mcast_params_t;

/* A process's board: members' ACKs (ibmc_mcast_board.h), a word each, then
 * children's arrival counts (ibmc_mcast_arrive.h), a word each, then the
 * children's partial results of a small allreduce, a slot of
 * IBMC_MCAST_PARTIAL_BYTES for each of at most IBMC_MCAST_PARTIAL_SLOTS
 * children (ibmc_mcast_arrive.h). */
enum {
    IBMC_MCAST_BOARD_ACKS = 0,
    IBMC_MCAST_BOARD_ARRIVALS = 1
};

#define IBMC_MCAST_PARTIAL_BYTES 128
#define IBMC_MCAST_PARTIAL_SLOTS 64
#define IBMC_MCAST_BOARD_WORDS(size) \
    (2 * (size_t) (size) + IBMC_MCAST_PARTIAL_SLOTS * IBMC_MCAST_PARTIAL_BYTES / 8)
/* Where child slot k's partial result starts in a board of `size`
 * members, in bytes from the board's start. */
#define IBMC_MCAST_PARTIAL_OFFSET(size, k) \
    (2 * (size_t) (size) * 8 + (size_t) (k) * IBMC_MCAST_PARTIAL_BYTES)

/* One process's engine: its world and its settings. */
typedef struct {
    const ibmc_mcast_ops_t *ops;
    void *io;
    ibmc_mcast_params_t params;
    ibmc_mcast_stats_t *stats;
    ibmc_mcast_faults_t *faults;        /* late_ack; NULL: none */
} ibmc_mcast_engine_t;

/* A channel's state is the engine's own: the I/O side asks for the set-up's
 * transitions (ibmc_mcast_chan_set_probing, _set_ready, _fail, below) and
 * reads it through the predicates after the struct. */
enum {
    IBMC_MCAST_CHAN_NEW = 0,    /* initialised, or zeroed memory, and not set up yet:
                                 * it takes nothing and every member falls back, as
                                 * FAILED, but it may still be set up */
    IBMC_MCAST_CHAN_READY = 1,
    IBMC_MCAST_CHAN_FAILED = 2, /* set up failed: every member falls back */
    IBMC_MCAST_CHAN_RETIRING = 3,       /* its communicator is gone; it answers NAKs until
                                         * every member has acknowledged */
    IBMC_MCAST_CHAN_PROBING = 4 /* set up but for the routing probe: only probes and
                                 * their acknowledgements are taken */
};

/* A broadcast posted to run after the channel's earlier ones (MPI_Ibcast,
 * MPI_Start of a persistent broadcast): the caller owns its memory until
 * it is done.  The channel keeps its posted broadcasts in a FIFO, in the
 * order posted, which MPI makes the same at every member; the progress
 * engine's turn (ibmc_mcast_chan_progress) starts, tests and finishes
 * them one after another, so no call waits.  Packets of a later broadcast
 * that come first wait in the receive window's slots, as they do for a
 * blocking one (ibmc_mcast_rx.h). */
typedef struct ibmc_mcast_op {
    struct ibmc_mcast_op *next;
    void *buf;
    uint64_t len;
    int root;
    int state;                  /* IBMC_MCAST_OP_* */
    int ready;                  /* its data is in buf (ibmc_mcast_op_ready) */
    int mismatch;               /* done: the root's message had another length */
    void *place;                /* NULL, or the I/O side's receiver for buf (place_arm),
                                 * set by the caller after ibmc_mcast_op_post */
} ibmc_mcast_op_t;

enum {
    IBMC_MCAST_OP_QUEUED = 0,
    IBMC_MCAST_OP_RUNNING,
    IBMC_MCAST_OP_DONE
};

/* One communicator's channel. */
struct ibmc_mcast_chan {
    ibmc_mcast_engine_t *eng;
    int state;                  /* IBMC_MCAST_CHAN_*: the engine's; others ask (set_probing...) */
    uint32_t context_id;
    uint32_t epoch;
    int size, rank;
    uint32_t payload_max;       /* data bytes per packet */
    unsigned char *roots;       /* members that have been a root: they get the final ACK */
    int probe_seen;             /* the routing probe reached this member */
    int probe_acks;             /* at rank 0: members it reached, of size - 1 */
    unsigned char *probe_acked; /* at rank 0: by member */
    int *laggards;              /* room for every member: who holds a stuck window */
    ibmc_mcast_rx_t rx;
    ibmc_mcast_slot_t *slots;
    unsigned char *slot_mem;
    ibmc_mcast_tx_t tx;
    uint32_t *acked;
    unsigned char *ring;        /* window x (header + payload_max): the I/O side registers it */
    size_t ring_bytes;
    /* co-roots (ibmc_mcast_coroot.h): with subgroup < size */
    int subgroup;
    unsigned char *ackers;      /* by member: acknowledges to this process as root */
    int *kids;                  /* room for every member: co-roots to relay to */
    ibmc_mcast_relay_t relay;   /* this process as a co-root */
    unsigned char *relay_ring;
    int *relay_ring_root;
    /* packets this co-root kept and still has to relay: relaying waits for
     * the co-root's next turn, so that the packet which completes its own
     * broadcast is not held back by the sends (window entries) */
    ibmc_mcast_relay_due_t *relay_due;
    uint32_t relay_due_n;
    uint32_t *leaf_acked, *agg_sent;
    uint32_t *child_acked;      /* size x child_slots: child co-roots' aggregates by root */
    int child_slots;
    unsigned char *owed;
    unsigned char *headed;      /* by root: this process was its co-root */
    int relay_root;             /* root of the last packet kept for relaying, or -1 */
    int mismatch;               /* the posted message's root sent another length */
    double nak_timeout;         /* seconds of silence before a NAK; adapts (deliver()) */
    double nak_sent_at;         /* when the last NAK went out */
    double nak_first_at;        /* the first NAK of the broadcast being received, or 0 */
    double srtt;                /* smoothed NAK-to-retransmission round trip */
    int nak_watch;              /* a timeout NAK is out: data that multicast brings
                                 * now proves it premature */
    double nak_quiet_from;      /* ... and the silence it ended began then */
    double retire_deadline;
    /* this process's ACK board (ibmc_mcast_board.h), if it has one */
    int has_board;
    ibmc_mcast_board_t board;
    uint64_t *board_seen;
    uint32_t *said;             /* by member: the last ACK this process sent it */
    /* MPI_Barrier's arrivals (ibmc_mcast_arrive.h) */
    struct {
        uint32_t entered;       /* barriers this process has entered on the channel */
        uint32_t reported;      /* the count last reported to its parent */
        uint32_t *heard;        /* by member: barriers its subtree reported arrived at */
        uint64_t *seen;         /* the arrival board's last words taken */
        int has_board;
        ibmc_mcast_board_t board;       /* the second part of this process's board */
        int fanout;
        /* a small allreduce's partial results (ibmc_mcast_reduce_start) */
        unsigned char *partials;        /* the board's third part, or local memory
                                         * without a board: children's slots */
        unsigned char *partials_local;
        void *acc;              /* this process's contribution, then its subtree's */
        size_t len;             /* 0: a barrier */
        ibmc_mcast_combine_fn combine;
        void *combine_ctx;
    } arr;
    /* posted broadcasts (ibmc_mcast_op_post), the first one running */
    ibmc_mcast_op_t *ops_head, *ops_tail;
    void *place;                /* the running op's place, while rx.armed */
    uint64_t place_from;        /* rx.in_place when it was armed */
    int place_rearms;           /* its receives started over (ibmc_mcast_placed_in) */
    int ops_driving;            /* the queue's turn is on the stack: a poll the engine
                                 * runs from inside it does not take another */
    /* the broadcast in progress (ibmc_mcast_bcast_start .. _finish) */
    struct {
        int root;
        double timeout, quiet_since;    /* receiver: the NAK timer */
        uint64_t seen;
        uint32_t idle;          /* turns since the clock was last read */
    } cur;
    /* this process as a root: asking the members that hold back its
     * unacknowledged packets (probe_laggards), in a broadcast or after it */
    struct {
        double since, after;    /* the ACKs have not moved since; ask after this long */
        uint32_t at_min, at_next;       /* min_acked and next when they last moved */
        int asked;              /* questions to the group since they last moved */
        int learned;            /* a stale NAK has doubled nak_timeout since the last
                                 * question (nak_in) */
        uint32_t idle;          /* looks since the clock was last read */
    } probe;
};

/* The state, as the I/O side may ask about it (called for every packet
 * that arrives: inline). */
static inline int ibmc_mcast_chan_is_ready(const ibmc_mcast_chan_t * c)
{
    return c->state == IBMC_MCAST_CHAN_READY;
}

static inline int ibmc_mcast_chan_is_probing(const ibmc_mcast_chan_t * c)
{
    return c->state == IBMC_MCAST_CHAN_PROBING;
}

static inline int ibmc_mcast_chan_is_retiring(const ibmc_mcast_chan_t * c)
{
    return c->state == IBMC_MCAST_CHAN_RETIRING;
}

static inline int ibmc_mcast_chan_is_failed(const ibmc_mcast_chan_t * c)
{
    return c->state == IBMC_MCAST_CHAN_FAILED;
}

/* Packets and RC messages of the channel are handed to it: it is set up
 * (PROBING: probes and their acknowledgements), in use (READY), or still
 * answering NAKs (RETIRING).  NEW and FAILED take nothing. */
static inline int ibmc_mcast_chan_accepts(const ibmc_mcast_chan_t * c)
{
    return c->state == IBMC_MCAST_CHAN_READY || c->state == IBMC_MCAST_CHAN_RETIRING ||
        c->state == IBMC_MCAST_CHAN_PROBING;
}

/* The root of the message this process is receiving (the posted
 * broadcast), or -1: where nearly every packet comes from. */
static inline int ibmc_mcast_chan_posted_root(const ibmc_mcast_chan_t * c)
{
    return c->rx.posted ? c->rx.root : -1;
}

/* Packets of the stream that may be outstanding (params.window). */
static inline uint32_t ibmc_mcast_chan_window(const ibmc_mcast_chan_t * c)
{
    return c->tx.window;
}

/* Seconds of silence before a NAK, as the channel has learned it. */
static inline double ibmc_mcast_chan_nak_timeout(const ibmc_mcast_chan_t * c)
{
    return c->nak_timeout;
}

void ibmc_mcast_engine_init(ibmc_mcast_engine_t * eng, const ibmc_mcast_ops_t * ops, void *io,
                            const ibmc_mcast_params_t * params, ibmc_mcast_stats_t * stats,
                            ibmc_mcast_faults_t * faults);

/* Members per co-root subgroup for a channel of `size` members under the
 * engine's settings (ibmc_mcast_engine.c says why). */
int ibmc_mcast_subgroup_size(const ibmc_mcast_params_t * params, int size);

/* A channel of `size` members in which this process is `rank`: its state
 * allocated for payload_max data bytes per packet, state NEW until the
 * caller sets it up (ibmc_mcast_chan_open, then the transitions below).
 * Returns 0, or -1 when memory ran out (free it with ibmc_mcast_chan_free
 * all the same). */
int ibmc_mcast_chan_init(ibmc_mcast_chan_t * c, ibmc_mcast_engine_t * eng, int size, int rank,
                         uint32_t context_id, uint32_t payload_max);

/* The members agreed on the epoch: the stream starts.  board_words, this
 * process's board of IBMC_MCAST_BOARD_WORDS(size) words (NULL: none): its
 * ACKs, then its barrier arrivals, is cleared to the epoch
 * before any member can learn where it is.  The state stays NEW: the caller
 * asks for PROBING while the group is probed, READY once every member takes
 * packets, or FAILED. */
void ibmc_mcast_chan_open(ibmc_mcast_chan_t * c, uint64_t job_key, uint32_t epoch,
                          uint64_t * board_words);

/* The set-up's transitions, which the I/O side asks for:
 *   NEW -> PROBING            set_probing: the group is being probed; only
 *                             probes and their acknowledgements are taken
 *   NEW, PROBING -> READY     set_ready: every member takes packets (from NEW
 *                             where no probe is needed: the host tests, the
 *                             simulator)
 *   NEW, PROBING -> FAILED    fail: every member falls back
 *   READY -> RETIRING         ibmc_mcast_chan_retire, below
 * Any other ask leaves the state as it is.  A failed channel stays failed:
 * its members agreed to fall back, and one that took packets again would
 * wait for roots that send none.  A channel in use (READY, RETIRING) is
 * never failed or set back: every member uses it, and one member's
 * fallback alone would leave the others' broadcasts waiting for it.  Each
 * works on zeroed memory (a NEW channel) as on an initialised one. */
void ibmc_mcast_chan_set_probing(ibmc_mcast_chan_t * c);
void ibmc_mcast_chan_set_ready(ibmc_mcast_chan_t * c);
void ibmc_mcast_chan_fail(ibmc_mcast_chan_t * c);

/* The routing probe is done for this member: at rank 0, every other member
 * acknowledged it; elsewhere, it arrived (ibmc_mcast_probe_in). */
int ibmc_mcast_chan_probe_done(const ibmc_mcast_chan_t * c);

void ibmc_mcast_chan_free(ibmc_mcast_chan_t * c);

/* A multicast packet of len bytes from member src (-1: not a member; the
 * I/O side takes the source from the completion, never the header). */
int ibmc_mcast_mcast_in(ibmc_mcast_chan_t * c, const void *pkt, size_t len, int src);

/* The j-th receive of the posted message's in-place queue (place_arm)
 * completed: header hdr, payload of plen bytes (where the device wrote it,
 * at the j-th fragment's place, or whole in a bounce when it ran over the
 * last place), from member src (-1: not a member).  *placed = 1: it was a
 * fragment of the posted message from its root, delivered: at its place
 * without a copy (fragment j), or moved there (one that came behind a
 * stray packet, or after a loss once the receives were taken back).
 * *placed = 0: anything else, counted by its twin on the main queue.  The
 * engine may have called place_disarm, and place_arm again (the receives
 * started over): the caller then drops the rest of the completions it
 * holds. */
int ibmc_mcast_placed_in(ibmc_mcast_chan_t * c, uint32_t j, const void *hdr, const void *payload,
                         size_t plen, int src, int *placed);

/* The in-place queue lost a packet or could not take one (a failed
 * receive, an injected fault): the in-place receive ends (place_disarm),
 * as in ibmc_mcast_placed_in's *placed = 0.  Nothing if not armed. */
int ibmc_mcast_place_end(ibmc_mcast_chan_t * c);

/* An RC message from member `from` (checked a member by the I/O side):
 * header h, then blen bytes. */
int ibmc_mcast_rc_in(ibmc_mcast_chan_t * c, int from, const ibmc_mcast_rc_t * h,
                     const void *body, size_t blen);

/* The routing probe of a PROBING channel reached this member (the I/O side
 * checked its sender): acknowledged to rank 0, once. */
int ibmc_mcast_probe_in(ibmc_mcast_chan_t * c);

/* The progress engine's turn for channel c: its posted broadcasts
 * (ibmc_mcast_op_post) as far as they can go now, ACKs written on its
 * board, if anything waits on them, and this process's packets as a root
 * that stay unacknowledged too long (ibmc_mcast_chan_deadline).  *release: a retiring channel is done (every
 * member acknowledged all, or its deadline passed) and may be freed. */
int ibmc_mcast_chan_progress(ibmc_mcast_chan_t * c, int *release);

/* A broadcast of len > 0 bytes from root, in three steps that never block:
 * start, then test until *done, then finish.  A caller with nothing else to
 * do calls ibmc_mcast_bcast, which waits with ops->wait between tests.
 * After finish, c->mismatch says the root's message had another length
 * (the application's error; buf is not usable). */
int ibmc_mcast_bcast_start(ibmc_mcast_chan_t * c, void *buf, uint64_t len, int root);
int ibmc_mcast_bcast_test(ibmc_mcast_chan_t * c, int *done);
int ibmc_mcast_bcast_finish(ibmc_mcast_chan_t * c);
int ibmc_mcast_bcast(ibmc_mcast_chan_t * c, void *buf, uint64_t len, int root);

/* Post op, a broadcast of len bytes at buf from root (len > 0), behind the
 * channel's earlier ones; ibmc_mcast_chan_progress runs it.  A blocking
 * ibmc_mcast_bcast on a channel with broadcasts posted waits behind them.
 * ready = 0 takes op's place in the order now, when the application calls,
 * and its turn waits until ibmc_mcast_op_ready says its data is in buf (a
 * node leader that gets the root's data from another process of its node
 * first): the order of a communicator's broadcasts must be the same at
 * every member, and that is the order of the calls. */
void ibmc_mcast_op_post(ibmc_mcast_chan_t * c, ibmc_mcast_op_t * op, void *buf, uint64_t len,
                        int root, int ready);

static inline void ibmc_mcast_op_ready(ibmc_mcast_op_t * op)
{
    op->ready = 1;
}

/* op has completed: its data is in buf at every member (at the root: its
 * data is in the channel's ring, and buf may be reused). */
static inline int ibmc_mcast_op_done(const ibmc_mcast_op_t * op)
{
    return op->state == IBMC_MCAST_OP_DONE;
}

/* Broadcasts posted and not done. */
static inline int ibmc_mcast_chan_ops_pending(const ibmc_mcast_chan_t * c)
{
    return c->ops_head != NULL;
}

/* The time (in ops->now's clock) at which ibmc_mcast_chan_progress next has
 * a timer to act on: this process's last packets as a root, unacknowledged,
 * and the question to the members that hold them.  HUGE_VAL when none runs;
 * a time already past when the next call acts at once. */
double ibmc_mcast_chan_deadline(const ibmc_mcast_chan_t * c);

/* The time (in ops->now's clock) at which ibmc_mcast_bcast_test next has a
 * timer to act on, between start and finish: the receiver's NAK, or the
 * root's question to its laggards.  HUGE_VAL when no timer runs, so that a
 * caller with nothing to do may sleep until a message comes; a time already
 * past when the next test acts at once. */
double ibmc_mcast_bcast_deadline(const ibmc_mcast_chan_t * c);

/* Seconds a retiring channel keeps answering before it is released anyway. */
#define IBMC_MCAST_RETIRE_SECONDS 10.0

/* The communicator is gone: every root hears where this member ended (its
 * co-roots as their leaves catch up), and the channel retires (RETIRING;
 * the caller retires only a READY channel).  *release: nothing is left to
 * serve, free it now. */
int ibmc_mcast_chan_retire(ibmc_mcast_chan_t * c, int *release);

#endif /* IBMC_MCAST_ENGINE_H_INCLUDED */
