/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L5 (protocols): what the drivers call of the node-shared segments
 * (ibmc_nodeseg.c); their layout is ibmc_nodeseg_impl.h's. */

#ifndef IBMC_NODESEG_H_INCLUDED
#define IBMC_NODESEG_H_INCLUDED

#include "ibmc_types.h"

int MPIDI_IBMC_nodeseg_comm_free(MPIR_Comm * comm);
void MPIDI_IBMC_nodeseg_finalize(MPIDI_IBMC_state_t * st);
int MPIDI_IBMC_nodeseg_check_cvars(void);
/* a completion of kind IBMC_WR_NODESEG: one of the leader's RDMA writes or
 * probes */
int MPIDI_IBMC_nodeseg_completion(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc);

#endif /* IBMC_NODESEG_H_INCLUDED */
