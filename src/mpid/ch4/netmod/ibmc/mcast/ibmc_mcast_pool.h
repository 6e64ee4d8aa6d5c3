/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The multicast groups a process holds, and which group a new
 * communicator's channel takes.
 *
 * Joining a group costs a subnet-manager transaction on InfiniBand (an IGMP
 * report on RoCE), and a subnet manager has few multicast LIDs; some leak
 * one on every join/leave cycle (opensm issue #43: after about 1,018).  So
 * groups are not joined and left per communicator.  A process holds at most
 * `cap` groups (MPIR_CVAR_IBMC_MCAST_GROUPS), each in an entry of this
 * pool, joins one the first time a channel needs it and keeps it while it
 * has room; communicators come and go over the same groups.
 *
 * Which group.  Communicators that broadcast at once should not share a
 * group: every member of one would receive, and drop, the other's packets.
 * MPI_Comm_split gives its disjoint results the same context id, and each
 * of them would find the same entries free, so neither the context id nor
 * the entry can tell them apart.  Their members do: disjoint communicators
 * have different lowest world ranks.  So the job's groups are numbered
 * (leader, k), leader being the communicator's lowest world rank and k <
 * cap (ibmc_mcast_pool_addr), and a channel takes one of its leader's.
 * Two live channels of the same leader share the leader itself, whose own
 * pool gives them different k; two of different leaders never meet.
 *
 * Every member offers what it has for the channel's leader (which groups of
 * that leader it holds, idle or busy, and whether it has an entry to spare)
 * in the channel's setup exchange, and every member picks alike from the
 * same offers, in this order of cost:
 *   1. IDLE:   a group every member holds with no channel on it;
 *   2. FRESH:  one every member holds idle or can join into an entry it
 *              never used;
 *   3. SHARED: one every member holds, busy (a communicator of the same
 *              leader): no join, but the members of each also get the
 *              other's packets and drop them as foreign;
 *   4. SWAP:   one every member holds idle or can join after leaving its
 *              idle group unused longest (one join/leave cycle, counted);
 *   5. SHARED: one that every member without room holds, busy, and the
 *              others join, leaving an idle group if they must;
 *   6. NONE:   a member has every entry busy and none with the leader's
 *              group every other such member holds: the communicator takes
 *              MPICH's binomial tree.
 * A program that keeps creating and freeing communicators of the same
 * leaders (dups and splits of the same processes) reuses idle groups and
 * never leaves one; only communicators of ever new leaders, beyond cap
 * groups at a process, make it swap.
 *
 * Pure logic, unit-tested on the host (test/unit/test_mcast_pool.c). */

#ifndef IBMC_MCAST_POOL_H_INCLUDED
#define IBMC_MCAST_POOL_H_INCLUDED

#include <stdint.h>

#define IBMC_MCAST_POOL_MAX 64  /* entries: one bit of k each in an offer */

typedef struct {
    uint32_t addr;              /* its group (ibmc_mcast_pool_addr), if joined */
    int joined;                 /* this process is a member of addr */
    int refs;                   /* channels on it */
    uint64_t idle_since;        /* pool clock when its last channel left */
} ibmc_mcast_pool_entry_t;

typedef struct {
    int cap;                    /* entries this process may use, 1..IBMC_MCAST_POOL_MAX */
    uint64_t clock;             /* counts channels leaving, to find the longest idle */
    ibmc_mcast_pool_entry_t e[IBMC_MCAST_POOL_MAX];
} ibmc_mcast_pool_t;

/* What one member offers a channel of a given leader; fixed size, it goes
 * in the setup exchange. */
typedef struct {
    uint64_t idle;              /* bit k: it holds (leader, k), no channel on it */
    uint64_t held;              /* bit k: it holds (leader, k) */
    uint32_t room;              /* 2: an entry never joined; 1: an idle entry it can
                                 * leave; 0: neither */
    uint32_t cap;
} ibmc_mcast_pool_offer_t;

typedef enum {
    IBMC_MCAST_POOL_IDLE = 0,
    IBMC_MCAST_POOL_FRESH,
    IBMC_MCAST_POOL_SHARED,
    IBMC_MCAST_POOL_SWAP,
    IBMC_MCAST_POOL_NONE
} ibmc_mcast_pool_kind_t;

void ibmc_mcast_pool_init(ibmc_mcast_pool_t * p, int cap);

/* Group k of leader's groups, as a number of the job's group space; the
 * I/O side makes an address of it. */
static inline uint32_t ibmc_mcast_pool_addr(uint32_t leader, int k)
{
    return leader * IBMC_MCAST_POOL_MAX + (uint32_t) k;
}

void ibmc_mcast_pool_offer(const ibmc_mcast_pool_t * p, uint32_t leader,
                           ibmc_mcast_pool_offer_t * o);

/* The leader's group k every member takes, from the n members' offers in any
 * order, with *kind; -1 with IBMC_MCAST_POOL_NONE when there is none, and
 * *full (else -1) then names a member (its index in offers) that has no
 * room. */
int ibmc_mcast_pool_pick(const ibmc_mcast_pool_offer_t * offers, int n,
                         ibmc_mcast_pool_kind_t * kind, int *full);

/* The entry for group addr at this process: the one that holds it, else one
 * never joined, else the idle one unused longest, which it must leave first
 * (*leave = 1).  -1: every entry is busy with another group. */
int ibmc_mcast_pool_place(const ibmc_mcast_pool_t * p, uint32_t addr, int *leave);

/* Entry e has joined addr / has left its group (or its join failed). */
void ibmc_mcast_pool_joined(ibmc_mcast_pool_t * p, int e, uint32_t addr);
void ibmc_mcast_pool_left(ibmc_mcast_pool_t * p, int e);

/* A channel takes or leaves entry e's group. */
void ibmc_mcast_pool_ref(ibmc_mcast_pool_t * p, int e);
void ibmc_mcast_pool_unref(ibmc_mcast_pool_t * p, int e);

/* Groups this process holds now. */
int ibmc_mcast_pool_held(const ibmc_mcast_pool_t * p);

#endif /* IBMC_MCAST_POOL_H_INCLUDED */
