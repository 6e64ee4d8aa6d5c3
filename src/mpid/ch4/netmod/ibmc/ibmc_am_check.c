/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include "ibmc_am_check.h"

int ibmc_am_check(const ibmc_pkt_view_t * v, const ibmc_am_rules_t * r)
{
    /* the parser keeps ids and sizes within the wire's ranges, but the
     * checks below must not index past the tables if it ever did not */
    if (v->handler_id < 0 || (unsigned) v->handler_id >= r->n_handlers ||
        (unsigned) v->handler_id >= IBMC_PKT_MAX_HANDLERS || !r->registered[v->handler_id])
        return IBMC_AM_ERR_HANDLER;
    if (v->dst_vci < 0 || (unsigned) v->dst_vci >= r->n_vcis ||
        v->src_vci < 0 || v->src_vci >= IBMC_PKT_MAX_VCIS)
        return IBMC_AM_ERR_VCI;
    if (!(v->flags & IBMC_PKT_F_SEND16) && v->am_hdr_sz < r->hdr_min[v->handler_id])
        return IBMC_AM_ERR_HDR;
    if (v->type == IBMC_PKT_RNDV && v->handler_id != r->rndv_handler)
        return IBMC_AM_ERR_RNDV;
    return IBMC_AM_OK;
}

const char *ibmc_am_strerror(int rc)
{
    switch (rc) {
        case IBMC_AM_OK:
            return "no error";
        case IBMC_AM_ERR_HANDLER:
            return "an active message for a handler that does not exist";
        case IBMC_AM_ERR_VCI:
            return "an active message for a VCI that does not exist";
        case IBMC_AM_ERR_HDR:
            return "an active-message header shorter than its handler reads";
        case IBMC_AM_ERR_RNDV:
            return "a rendezvous for a handler other than point-to-point send";
        default:
            return "an unknown active-message check failure";
    }
}
