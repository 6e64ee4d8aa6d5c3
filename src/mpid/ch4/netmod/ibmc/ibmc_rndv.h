/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L5 (protocols): the zero-copy rendezvous protocol (ibmc_rndv.c). */

#ifndef IBMC_RNDV_H_INCLUDED
#define IBMC_RNDV_H_INCLUDED

#include "ibmc_types.h"

int MPIDI_IBMC_rndv_send(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, int handler_id,
                         const void *am_hdr, MPI_Aint am_hdr_sz, const void *buf,
                         MPI_Aint data_sz, int src_vci, int dst_vci, MPIR_Request * sreq,
                         int *sent);
int MPIDI_IBMC_rndv_recv(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn,
                         const ibmc_pkt_view_t * v);
int MPIDI_IBMC_rndv_fin(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn, const char *payload,
                        size_t plen);
/* post the connection's waiting READs and window invalidations, as far as
 * its send queue allows (the busy-list walk calls it before the send queue) */
int MPIDI_IBMC_rndv_service(MPIDI_IBMC_state_t * st, MPIDI_IBMC_conn_t * conn);
/* a completion of kind IBMC_WR_RDMA_READ, IBMC_WR_MW_BIND or IBMC_WR_MW_INV */
int MPIDI_IBMC_rndv_completion(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc);
int MPIDI_IBMC_rndv_copy_cb(MPIR_Request * rreq);
void MPIDI_IBMC_rndv_free_all(MPIDI_IBMC_state_t * st);

#endif /* IBMC_RNDV_H_INCLUDED */
