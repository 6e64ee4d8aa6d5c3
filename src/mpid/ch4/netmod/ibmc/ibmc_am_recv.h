/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L6 (CH4 entry points): receiving active messages (ibmc_am_recv.c). */

#ifndef IBMC_AM_RECV_H_INCLUDED
#define IBMC_AM_RECV_H_INCLUDED

#include "ibmc_types.h"

int MPIDI_IBMC_recv_packet(MPIDI_IBMC_state_t * st, uint32_t src_rank, const char *pkt,
                           size_t len);
/* a completion of kind IBMC_WR_RC_RECV: the packet, then its buffer again */
int MPIDI_IBMC_recv_completion(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc);
void MPIDI_IBMC_am_rules_refresh(MPIDI_IBMC_state_t * st);
int MPIDI_IBMC_credit_return(MPIDI_IBMC_state_t * st, uint32_t src_rank, int pkt_type,
                             int pkt_flags);

#endif /* IBMC_AM_RECV_H_INCLUDED */
