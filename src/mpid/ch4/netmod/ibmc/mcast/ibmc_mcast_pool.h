/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The pool of multicast groups a process's communicators share.
 *
 * Joining a group costs a subnet-manager transaction on InfiniBand (an IGMP
 * report on RoCE), and a subnet manager has few multicast LIDs; some leak
 * one on every join/leave cycle (opensm issue #43: after about 1,018).  So
 * groups are not joined and left per communicator.  A process holds at most
 * `cap` groups (MPIR_CVAR_IBMC_MCAST_GROUPS), joins a group the first time a
 * channel needs it, and keeps it until MPI_Finalize; communicators come and
 * go over the same groups.  Packets carry the communicator's context id and
 * an epoch (ibmc_mcast_wire.h), so a group reused, or shared by two live
 * communicators, delivers nothing to the wrong one: a member drops the other
 * communicator's packets as foreign.
 *
 * Which group a new channel takes must be the same at every member, and
 * members hold different sets of channels.  Every member contributes the
 * mask of its free groups to the channel's setup exchange; the channel takes
 * the lowest group free at all of them.  When none is (more live channels
 * than groups), it shares a group picked by a hash of its context id and
 * epoch, which every member computes alike.
 *
 * Pure logic, unit-tested on the host (test/unit/test_mcast_pool.c). */

#ifndef IBMC_MCAST_POOL_H_INCLUDED
#define IBMC_MCAST_POOL_H_INCLUDED

#include <stdint.h>

#define IBMC_MCAST_POOL_MAX 64  /* groups: one bit each in a free mask */

typedef struct {
    int cap;                    /* groups this process may hold, 1..IBMC_MCAST_POOL_MAX */
    int refs[IBMC_MCAST_POOL_MAX];      /* channels on each group */
} ibmc_mcast_pool_t;

void ibmc_mcast_pool_init(ibmc_mcast_pool_t * p, int cap);

/* Bit k set: group k carries no channel of this process. */
uint64_t ibmc_mcast_pool_free_mask(const ibmc_mcast_pool_t * p);

/* The group for a channel, from every member's free mask (n of them, each
 * member's cap being the same CVAR): the lowest free at all, else the
 * hashed one; *shared says which. */
int ibmc_mcast_pool_pick(const uint64_t * masks, int n, int cap, uint32_t context_id,
                         uint32_t epoch, int *shared);

/* A channel takes or leaves group k. */
void ibmc_mcast_pool_ref(ibmc_mcast_pool_t * p, int k);
void ibmc_mcast_pool_unref(ibmc_mcast_pool_t * p, int k);

#endif /* IBMC_MCAST_POOL_H_INCLUDED */
