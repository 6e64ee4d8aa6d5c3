/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L5, multicast glue: finalize (L5.5, beside bcast, which it does
 * not call).  Below: setup (the channels' release and the ACK boards it
 * registered), group (leaving the groups), device (its resources).  Above:
 * MPI_Finalize's driver (ibmc_init.c, L7), which first has the receive
 * path serve the retiring channels (MPIDI_IBMC_mcast_serve_retiring).
 *
 * The process's multicast side at MPI_Finalize: after the netmod's barrier
 * everything goes but the ACK boards, which a member's late RDMA write may
 * still reach; after PMI's barrier, the boards too.  It sits on top of the
 * glue, with MPI_Bcast's entry and MPI_Comm_free's retirement, because it
 * undoes what every layer under it made: a file lower down could not
 * release channels or leave groups without calling up. */

#include <mpidimpl.h>
#include "../ibmc_types.h"
#include "ibmc_mcast_impl.h"

void MPIDI_IBMC_mcast_finalize(MPIDI_IBMC_state_t * st)
{
    MPIDI_IBMC_mcast_t *mc = st->mcast;
    if (!mc)
        return;
    /* persistent requests the application did not free: their QPs leave
     * the groups while the groups are known, and go with their
     * registrations before the channels and the device's protection
     * domain */
    MPIDI_IBMC_mcast_place_release_all(mc);
    while (mc->chans)
        MPIDI_IBMC_mcast_chan_release(st, mc, mc->chans);
    for (int k = 0; k < mc->pool.cap; k++)
        MPIDI_IBMC_mcast_group_leave(mc, k);
    MPIDI_IBMC_mcast_device_free(mc);
    /* nothing but the boards is left, and nothing polls them */
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
        MPIDI_IBMC_pvars.mcast.boards--;
    }
    MPL_free(mc);
    st->mcast = NULL;
}
