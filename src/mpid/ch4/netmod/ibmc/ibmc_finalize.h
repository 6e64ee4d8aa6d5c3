/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L7 (drivers): MPI_Finalize's steps (ibmc_finalize.c). */

#ifndef IBMC_FINALIZE_H_INCLUDED
#define IBMC_FINALIZE_H_INCLUDED

#include "ibmc_types.h"

/* ibmc_finalize.c: deliver what this process owes; the barrier that keeps
 * progress running (ibmc_finbar.h); after the multicast channel has
 * closed, drop its queued messages and wait for the send queues */
int MPIDI_IBMC_fin_drain(MPIDI_IBMC_state_t * st);
int MPIDI_IBMC_fin_barrier(MPIDI_IBMC_state_t * st);
int MPIDI_IBMC_fin_settle(MPIDI_IBMC_state_t * st);

#endif /* IBMC_FINALIZE_H_INCLUDED */
