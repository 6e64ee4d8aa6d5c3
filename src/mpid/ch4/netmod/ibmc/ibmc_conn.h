/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L3 (connections): on-demand RC connections and the busy list of connections
 * with work left (ibmc_conn.c). */

#ifndef IBMC_CONN_H_INCLUDED
#define IBMC_CONN_H_INCLUDED

#include "ibmc_types.h"
#include "ibmc_cm_msg.h"

static inline int MPIDI_IBMC_conn_has_work(const MPIDI_IBMC_conn_t * conn)
{
    return ibmc_cm_has_timer(&conn->cm) || conn->q_head || conn->need_rtu || conn->rd_head ||
        conn->credit_pending || conn->inv_head;
}

int MPIDI_IBMC_conn_event(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn,
                          ibmc_cm_event_t ev, uint32_t qpn);
/* a datagram that passed ibmc_cm_msg's checks: returns IBMC_CM_MSG_OK or the
 * reason to drop it; a failure to act on it goes to *mpi_errno */
int MPIDI_IBMC_conn_recv_cm(MPIDI_IBMC_state_t * st, const ibmc_cm_msg_t * msg, int *mpi_errno);
void MPIDI_IBMC_conn_mark_busy(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn);
void MPIDI_IBMC_conn_destroy_all(MPIDI_IBMC_state_t * st);

#endif /* IBMC_CONN_H_INCLUDED */
