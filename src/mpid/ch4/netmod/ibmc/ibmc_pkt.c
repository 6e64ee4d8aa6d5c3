/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <string.h>
#include "ibmc_pkt.h"

size_t ibmc_pkt_hdr_len(int has_msg_sz)
{
    return sizeof(ibmc_pkt_hdr_t) + (has_msg_sz ? sizeof(ibmc_pkt_msg_sz_t) : 0);
}

size_t ibmc_pkt_put_hdr(void *buf, const ibmc_pkt_info_t * info)
{
    ibmc_pkt_hdr_t h;
    memset(&h, 0, sizeof(h));
    h.type = (uint8_t) info->type;
    h.flags = (uint8_t) ((info->flags & ~IBMC_PKT_F_MSG_SZ) |
                         (info->has_msg_sz ? IBMC_PKT_F_MSG_SZ : 0));
    h.handler_id = (uint8_t) info->handler_id;
    h.vcis = (uint8_t) ((info->src_vci << 4) | (info->dst_vci & 0xf));
    h.am_hdr_sz = (uint16_t) info->am_hdr_sz;
    memcpy(buf, &h, sizeof(h));
    if (info->has_msg_sz) {
        ibmc_pkt_msg_sz_t ext = {.msg_sz = info->msg_sz };
        memcpy((char *) buf + sizeof(h), &ext, sizeof(ext));
    }
    return ibmc_pkt_hdr_len(info->has_msg_sz);
}

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

int ibmc_send16_fits(const ibmc_send16_fields_t * f)
{
    return f->flags >= 0 && f->flags < 0x80 && f->error_bits >= 0 && f->error_bits <= 0xff;
}

size_t ibmc_send16_len(int has_sreq)
{
    return sizeof(ibmc_send16_t) + (has_sreq ? sizeof(uint64_t) : 0);
}

size_t ibmc_send16_pack(void *dst, const ibmc_send16_fields_t * f)
{
    ibmc_send16_t w;
    memset(&w, 0, sizeof(w));
    w.src_rank = f->src_rank;
    w.tag = f->tag;
    w.context_id = f->context_id;
    w.flags = (uint8_t) f->flags;
    w.error_bits = (uint8_t) f->error_bits;
    w.bits = f->has_sreq ? IBMC_SEND16_F_SREQ : 0;
    memcpy(dst, &w, sizeof(w));
    if (f->has_sreq)
        memcpy((char *) dst + sizeof(w), &f->sreq, sizeof(f->sreq));
    return ibmc_send16_len(f->has_sreq);
}

size_t ibmc_send16_unpack(const void *src, size_t len, ibmc_send16_fields_t * f)
{
    ibmc_send16_t w;
    if (len < sizeof(w))
        return 0;
    memcpy(&w, src, sizeof(w));
    int has_sreq = (w.bits & IBMC_SEND16_F_SREQ) != 0;
    if (len < ibmc_send16_len(has_sreq))
        return 0;
    memset(f, 0, sizeof(*f));
    f->src_rank = w.src_rank;
    f->tag = w.tag;
    f->context_id = w.context_id;
    f->flags = w.flags;
    f->error_bits = w.error_bits;
    f->has_sreq = has_sreq;
    if (has_sreq)
        memcpy(&f->sreq, (const char *) src + sizeof(w), sizeof(f->sreq));
    return ibmc_send16_len(has_sreq);
}
