/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <string.h>
#include "ibmc_cm_msg.h"

/* Offsets in the 40 bytes a UD receive gets before the payload.  With an
 * InfiniBand or RoCE v1 (or RoCE v2 over IPv6) header they hold the GRH,
 * whose source GID starts at byte 8.  For RoCE v2 over IPv4 the first 20
 * bytes are undefined and the IPv4 header fills the last 20, with the source
 * address at byte 12 of it (ibv_poll_cq(3), "IBV_WC_GRH"). */
#define GRH_SGID 8
#define GRH_IPV4_SADDR (20 + 12)

int ibmc_cm_msg_parse(const void *buf, size_t len, uint64_t job_key, int world_size,
                      ibmc_cm_msg_t * msg)
{
    if (len < sizeof(*msg))
        return IBMC_CM_MSG_ERR_SHORT;
    memcpy(msg, buf, sizeof(*msg));
    if (msg->magic != IBMC_CM_MAGIC)
        return IBMC_CM_MSG_ERR_MAGIC;
    if (msg->job_key != job_key)
        return IBMC_CM_MSG_ERR_JOB;
    if (msg->type != IBMC_CM_MSG_REQ && msg->type != IBMC_CM_MSG_REP)
        return IBMC_CM_MSG_ERR_TYPE;
    if (world_size <= 0 || msg->src_rank >= (uint32_t) world_size)
        return IBMC_CM_MSG_ERR_RANK;
    return IBMC_CM_MSG_OK;
}

/* ::ffff:a.b.c.d, the GID of a RoCE port's IPv4 address */
static int gid_is_ipv4(const uint8_t gid[16])
{
    static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    return !memcmp(gid, prefix, sizeof(prefix));
}

int ibmc_cm_msg_check_source(const ibmc_card_t * card, const ibmc_cm_src_t * src)
{
    if (src->src_qp != card->ud_qpn)
        return IBMC_CM_MSG_ERR_SOURCE;
    if (src->link_layer == IBMC_CM_LINK_ETH) {
        /* RoCE routes by GID: the header is always there */
        if (!src->grh)
            return IBMC_CM_MSG_ERR_SOURCE;
        if (gid_is_ipv4(card->gid))
            return memcmp(src->grh + GRH_IPV4_SADDR, card->gid + 12, 4) ?
                IBMC_CM_MSG_ERR_SOURCE : IBMC_CM_MSG_OK;
        return memcmp(src->grh + GRH_SGID, card->gid, 16) ?
            IBMC_CM_MSG_ERR_SOURCE : IBMC_CM_MSG_OK;
    }
    /* InfiniBand: the subnet manager assigned the LID; a GRH, present when
     * the sender used one, must name the card's GID as well */
    if (src->slid != card->lid)
        return IBMC_CM_MSG_ERR_SOURCE;
    if (src->grh && memcmp(src->grh + GRH_SGID, card->gid, 16))
        return IBMC_CM_MSG_ERR_SOURCE;
    return IBMC_CM_MSG_OK;
}

const char *ibmc_cm_msg_strerror(int err)
{
    switch (err) {
        case IBMC_CM_MSG_OK:
            return "no error";
        case IBMC_CM_MSG_ERR_SHORT:
            return "a datagram shorter than a connection message";
        case IBMC_CM_MSG_ERR_MAGIC:
            return "a datagram that is not ibmc's";
        case IBMC_CM_MSG_ERR_JOB:
            return "a connection message of another job";
        case IBMC_CM_MSG_ERR_TYPE:
            return "an unknown connection message type";
        case IBMC_CM_MSG_ERR_RANK:
            return "a connection message from a rank outside the job";
        case IBMC_CM_MSG_ERR_SOURCE:
            return "a connection message not sent from the rank it names";
        case IBMC_CM_MSG_ERR_ECHO:
            return "a connection reply that does not answer our request";
        default:
            return "an unknown connection message error";
    }
}
