/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The hardware-multicast channel's verbs side (ibmc_mcast.c): the process's
 * multicast queue pair with its own completion queue and receive pool, the
 * pool of groups joined through rdma_cm that communicators share
 * (ibmc_mcast_pool.h), and the RC messages that carry ACKs, NAKs,
 * retransmissions and relays to co-roots.  The protocol itself is in the
 * verbs-free ibmc_mcast_rx.c, ibmc_mcast_tx.c and ibmc_mcast_coroot.c. */

#ifndef IBMC_MCAST_H_INCLUDED
#define IBMC_MCAST_H_INCLUDED

#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include "ibmc_mcast_rx.h"
#include "ibmc_mcast_tx.h"
#include "ibmc_mcast_coroot.h"
#include "ibmc_mcast_faults.h"
#include "ibmc_mcast_pool.h"
#include "ibmc_mcast_board.h"

/* The payload of an IBMC_PKT_MCAST packet on RC. */
enum {
    IBMC_MCAST_RC_ACK = 1,      /* a = the sender's cumulative position (a co-root's:
                                 * its subgroup's) */
    IBMC_MCAST_RC_NAK = 2,      /* positions [a, a + b) of root's message are missing */
    IBMC_MCAST_RC_DATA = 3,     /* a packet of root's message follows, sent again for a NAK */
    IBMC_MCAST_RC_ACK_REQ = 4,  /* the root's window is stuck on the receiver: ACK now */
    IBMC_MCAST_RC_PROBE_ACK = 5,        /* the routing probe reached this member */
    IBMC_MCAST_RC_RELAY = 6     /* a packet of root's message follows, for a co-root */
};

enum {
    /* a NAK of a gap: the root sent a later packet, so these were sent too */
    IBMC_MCAST_RC_F_GAP = 1
};

typedef struct {
    uint8_t kind;               /* IBMC_MCAST_RC_* */
    uint8_t flags;              /* IBMC_MCAST_RC_F_* */
    uint8_t reserved[2];
    uint32_t context_id;
    uint32_t epoch;
    uint32_t a, b;
    int32_t root;               /* NAK, DATA, RELAY: the root of the message; checked
                                 * against the plan before it is believed */
} ibmc_mcast_rc_t;

enum {
    IBMC_MCAST_CHAN_READY = 1,
    IBMC_MCAST_CHAN_FAILED = 2, /* every member falls back; why says why */
    IBMC_MCAST_CHAN_RETIRING = 3,       /* its communicator is gone; it answers NAKs until
                                         * every member has acknowledged */
    IBMC_MCAST_CHAN_PROBING = 4 /* set up but for the routing probe: only probes and
                                 * their acknowledgements are taken */
};

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

typedef struct MPIDI_IBMC_mcast_chan {
    struct MPIDI_IBMC_mcast_chan *next;
    int state;                  /* IBMC_MCAST_CHAN_* */
    char why[160];
    int single_node;            /* FAILED because the communicator is inside one node */
    int told;                   /* why was printed (MPIR_CVAR_IBMC_STATS) */
    uint32_t context_id;
    uint32_t epoch;
    int size, rank;
    int *world;                 /* by communicator rank */
    uint32_t *qpn;              /* their multicast QPs, by communicator rank */
    unsigned char *roots;       /* members that have been a root: they get the final ACK */
    int group;                  /* its group in the engine's pool, or -1 */
    int probe_seen;             /* the routing probe reached this member */
    int probe_acks;             /* at rank 0: members it reached, of size - 1 */
    unsigned char *probe_acked; /* at rank 0: by member */
    int *laggards;              /* room for every member: who holds a stuck root's window */
    ibmc_mcast_rx_t rx;
    ibmc_mcast_slot_t *slots;
    unsigned char *slot_mem;
    ibmc_mcast_tx_t tx;
    uint32_t *acked;
    unsigned char *ring;
    struct ibv_mr *ring_mr;
    /* co-roots (ibmc_mcast_coroot.h): with subgroup < size */
    int subgroup;               /* members per subgroup: MPIR_CVAR_IBMC_MCAST_SUBGROUP */
    unsigned char *ackers;      /* by member: acknowledges to this process as root */
    int *kids;                  /* room for every member: co-roots to relay to */
    ibmc_mcast_relay_t relay;   /* this process as a co-root */
    unsigned char *relay_ring;
    int *relay_ring_root;
    uint32_t *leaf_acked, *agg_sent;
    unsigned char *owed;
    unsigned char *headed;      /* by root: this process was its co-root */
    int relay_root;             /* root of the last packet kept for relaying, or -1 */
    int mismatch;               /* the posted message's root sent another length */
    double nak_timeout;         /* seconds of silence before a NAK; adapts (deliver()) */
    double nak_sent_at;         /* when the last NAK went out */
    double nak_first_at;        /* the first NAK of the broadcast being received, or 0 */
    double srtt;                /* smoothed NAK-to-retransmission round trip */
    double retire_deadline;
    /* ACKs by RDMA write (MPIR_CVAR_IBMC_MCAST_RDMA_ACKS) */
    MPIDI_IBMC_mcast_boardmem_t *board_mem;     /* this process's board, or NULL */
    ibmc_mcast_board_t board;
    uint64_t *board_seen;
    uint64_t *peer_board;       /* by member: its board's address, 0 if it has none */
    uint32_t *peer_rkey;
    uint32_t *said;             /* by member: the last ACK this process sent it */
} MPIDI_IBMC_mcast_chan_t;

/* What a receive completion said, kept while the fault injector holds it. */
typedef struct {
    uint32_t len, src_qp;
    int has_gid;
    union ibv_gid sgid;
} ibmc_mcast_rmeta_t;

/* One group of the pool: joined on first use, kept until MPI_Finalize. */
typedef struct {
    struct sockaddr_in maddr;
    int joined;                 /* rdma_join_multicast was called: leave it */
    uintptr_t join_id;          /* the join's number, its rdma_cm events' context */
    int join_state;             /* 0 waiting, 1 joined, -1 failed */
    int attached;
    union ibv_gid mgid;
    uint16_t mlid;
    struct ibv_ah *ah;
    uint32_t qkey;
    char why[160];              /* why the join failed */
} MPIDI_IBMC_mcast_group_t;

typedef struct MPIDI_IBMC_mcast {
    int state;                  /* 0 not tried, 1 ready, -1 unusable: why */
    int finalized;              /* only the boards are left (MPIDI_IBMC_mcast_free) */
    char why[192];
    struct rdma_event_channel *evch;
    struct rdma_cm_id *id;
    int joins_pending;
    uintptr_t joins;            /* joins asked for so far: numbers them from 1 */
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    char *rbufs;
    size_t rbuf_sz;
    int n_rbufs;
    struct ibv_mr *rmr;
    ibmc_mcast_rmeta_t *rmeta;  /* by receive buffer */
    char *probe_pkt;            /* a send buffer after the receive buffers, same MR */
    uint32_t mtu;
    uint32_t payload_max;
    int sq_depth, sq_inflight;
    uint32_t epoch_seq;         /* channels this process has set up */
    ibmc_mcast_faults_spec_t fault_spec;
    ibmc_mcast_faults_t faults;
    MPIDI_IBMC_mcast_chan_t *chans;
    MPIDI_IBMC_mcast_boardmem_t *boards;
    ibmc_mcast_pool_t pool;
    MPIDI_IBMC_mcast_group_t groups[IBMC_MCAST_POOL_MAX];
} MPIDI_IBMC_mcast_t;

struct MPIDI_IBMC_state;

/* MPI_Init: the CVARs are checked (a bad value is an error naming it) */
int MPIDI_IBMC_mcast_check_cvars(void);
/* the progress engine: completions of the multicast QP, rdma_cm events;
 * *found: how many completions there were */
int MPIDI_IBMC_mcast_poll(struct MPIDI_IBMC_state *st, int *found);
/* an IBMC_PKT_MCAST packet from world rank src */
int MPIDI_IBMC_mcast_recv_rc(struct MPIDI_IBMC_state *st, int src, const char *payload,
                             size_t plen);
/* MPI_Comm_free */
int MPIDI_IBMC_mcast_comm_free(MPIR_Comm * comm);
/* MPI_Finalize, before the netmod's last barrier: channels still answer
 * NAKs until every member has acknowledged everything, then all goes but
 * the ACK boards */
void MPIDI_IBMC_mcast_finalize(struct MPIDI_IBMC_state *st);
/* MPI_Finalize, after that barrier: no member writes ACKs any more */
void MPIDI_IBMC_mcast_free(struct MPIDI_IBMC_state *st);

#endif /* IBMC_MCAST_H_INCLUDED */
