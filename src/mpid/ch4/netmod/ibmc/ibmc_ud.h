/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L2 (wire): the connection datagrams on the UD queue pair: post receive
 * buffers, send a connection message, check a received one (ibmc_ud.c). */

#ifndef IBMC_UD_H_INCLUDED
#define IBMC_UD_H_INCLUDED

#include "ibmc_types.h"
#include "ibmc_cm_msg.h"

int MPIDI_IBMC_ud_post_rbuf(MPIDI_IBMC_state_t * st, int idx);
int MPIDI_IBMC_ud_send(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn,
                       const ibmc_cm_msg_t * msg);
/* check the datagram of a completion of kind IBMC_WR_UD_RECV into *msg;
 * *verdict is IBMC_CM_MSG_OK or the reason to drop it (then
 * MPIDI_IBMC_ud_dropped) */
int MPIDI_IBMC_ud_recv(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc, ibmc_cm_msg_t * msg,
                       int *verdict);
/* a completion of kind IBMC_WR_UD_SEND */
int MPIDI_IBMC_ud_send_completion(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc);
void MPIDI_IBMC_ud_dropped(MPIDI_IBMC_state_t * st, int verdict);
/* MPIR_CVAR_IBMC_FAULT_QP_ERROR=forge_cm=N, at the end of MPI_Init */
int MPIDI_IBMC_ud_forge_test(MPIDI_IBMC_state_t * st);

#endif /* IBMC_UD_H_INCLUDED */
