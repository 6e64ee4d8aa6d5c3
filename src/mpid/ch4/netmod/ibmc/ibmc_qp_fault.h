/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L1 (base): the testing knob MPIR_CVAR_IBMC_FAULT_QP_ERROR: parsing, the
 * predicates the owners of each path ask, and breaking a queue pair (ibmc_qp_fault.c). */

#ifndef IBMC_QP_FAULT_H_INCLUDED
#define IBMC_QP_FAULT_H_INCLUDED

#include "ibmc_types.h"

enum { IBMC_QP_FAULT_SEND, IBMC_QP_FAULT_READ, IBMC_QP_FAULT_STALE_READ,
    IBMC_QP_FAULT_FORGE_CM, IBMC_QP_FAULT_NODESEG_NOMEM
};
int MPIDI_IBMC_qp_fault_init(MPIDI_IBMC_state_t * st);
void MPIDI_IBMC_qp_fault_posted(MPIDI_IBMC_state_t * st, struct ibv_qp *qp, int is_read);
/* stale_read=N: whether the rendezvous receive that just sent its FIN is
 * the N-th, whose sender is then read again with the finished rkey */
int MPIDI_IBMC_qp_fault_stale_read_due(MPIDI_IBMC_state_t * st);
/* forge_cm=N: whether this process sends rank 0 forged datagrams at the end
 * of MPI_Init, and the rank they claim to come from */
int MPIDI_IBMC_qp_fault_forger(const MPIDI_IBMC_state_t * st, int *claimed);
/* nodeseg_nomem=N: whether this process plays out of memory planning a
 * node segment (world rank N does, always) */
int MPIDI_IBMC_qp_fault_nodeseg_nomem(const MPIDI_IBMC_state_t * st);

#endif /* IBMC_QP_FAULT_H_INCLUDED */
