/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <string.h>
#include "ibmc_pkt.h"

/* The flags each packet type may carry. */
static int flags_allowed(int type)
{
    switch (type) {
        case IBMC_PKT_AM:
            return IBMC_PKT_F_STARVED | IBMC_PKT_F_MSG_SZ | IBMC_PKT_F_SEND16;
        case IBMC_PKT_RNDV:
            return IBMC_PKT_F_STARVED | IBMC_PKT_F_MSG_SZ;
        case IBMC_PKT_AM_CONT:
        case IBMC_PKT_RTU:
        case IBMC_PKT_RNDV_FIN:
        case IBMC_PKT_CREDIT:
        case IBMC_PKT_MCAST:
        case IBMC_PKT_FIN:
            return IBMC_PKT_F_STARVED;
        default:
            return -1;
    }
}

int ibmc_pkt_parse(const void *pkt, size_t len, size_t rndv_info_sz, ibmc_pkt_view_t * v)
{
    ibmc_pkt_hdr_t h;

    if (len < sizeof(h))
        return IBMC_PKT_ERR_SHORT;
    memcpy(&h, pkt, sizeof(h));
    int allowed = flags_allowed(h.type);
    if (allowed < 0)
        return IBMC_PKT_ERR_TYPE;
    if (h.flags & ~allowed)
        return IBMC_PKT_ERR_FLAGS;

    int has_msg_sz = (h.flags & IBMC_PKT_F_MSG_SZ) != 0;
    /* a compact header is only used for a message that ends in its packet,
     * and a rendezvous announcement always says how much it leaves behind */
    if ((has_msg_sz && (h.flags & IBMC_PKT_F_SEND16)) ||
        (h.type == IBMC_PKT_RNDV && !has_msg_sz))
        return IBMC_PKT_ERR_FLAGS;
    size_t hlen = ibmc_pkt_hdr_len(has_msg_sz);
    if (len < hlen)
        return IBMC_PKT_ERR_SHORT;

    memset(v, 0, sizeof(*v));
    v->type = h.type;
    v->flags = h.flags;
    v->credits = h.credits;
    v->payload = (const char *) pkt + hlen;
    v->plen = len - hlen;
    v->msg_sz = v->plen;
    if (has_msg_sz) {
        ibmc_pkt_msg_sz_t ext;
        memcpy(&ext, (const char *) pkt + sizeof(h), sizeof(ext));
        v->msg_sz = ext.msg_sz;
        if (v->msg_sz > IBMC_PKT_MAX_MSG_SZ)
            return IBMC_PKT_ERR_SIZE;
    }
    if (h.type != IBMC_PKT_AM && h.type != IBMC_PKT_RNDV)
        return IBMC_PKT_OK;

    v->handler_id = h.handler_id;
    v->src_vci = h.vcis >> 4;
    v->dst_vci = h.vcis & 0xf;
    v->am_hdr_sz = h.am_hdr_sz;
    size_t need = v->am_hdr_sz + (h.type == IBMC_PKT_RNDV ? rndv_info_sz : 0);
    if (v->plen < need)
        return IBMC_PKT_ERR_AM_HDR;
    if (h.type == IBMC_PKT_AM && has_msg_sz && v->msg_sz <= v->plen)
        return IBMC_PKT_ERR_SIZE;       /* it said the message goes on */
    if (v->msg_sz < v->am_hdr_sz)
        return IBMC_PKT_ERR_SIZE;
    return IBMC_PKT_OK;
}

const char *ibmc_pkt_strerror(int err)
{
    switch (err) {
        case IBMC_PKT_OK:
            return "no error";
        case IBMC_PKT_ERR_SHORT:
            return "a packet shorter than its header";
        case IBMC_PKT_ERR_TYPE:
            return "an unknown packet type";
        case IBMC_PKT_ERR_AM_HDR:
            return "an active-message header larger than its packet";
        case IBMC_PKT_ERR_SIZE:
            return "a message size that contradicts the packet";
        case IBMC_PKT_ERR_FLAGS:
            return "packet flags that do not belong to its type";
        default:
            return "an unknown packet error";
    }
}
