/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <string.h>
#include "ibmc_frag.h"

void ibmc_frag_tx_init(ibmc_frag_tx_t * tx, size_t am_hdr_sz, size_t data_sz)
{
    tx->am_hdr_sz = am_hdr_sz;
    tx->data_sz = data_sz;
    tx->data_off = 0;
    tx->first_done = 0;
}

int ibmc_frag_next(ibmc_frag_tx_t * tx, size_t payload_cap, ibmc_frag_t * out)
{
    size_t room, left;

    if (ibmc_frag_tx_done(tx))
        return 0;

    left = tx->data_sz - tx->data_off;
    out->is_first = !tx->first_done;
    room = out->is_first ? payload_cap - tx->am_hdr_sz : payload_cap;
    out->data_off = tx->data_off;
    out->data_len = left < room ? left : room;

    tx->first_done = 1;
    tx->data_off += out->data_len;
    return 1;
}

int ibmc_frag_tx_done(const ibmc_frag_tx_t * tx)
{
    return tx->first_done && tx->data_off == tx->data_sz;
}

void ibmc_reasm_init(ibmc_reasm_t * r)
{
    r->buf = NULL;
    r->msg_sz = 0;
    r->filled = 0;
}

int ibmc_reasm_active(const ibmc_reasm_t * r)
{
    return r->buf != NULL;
}

int ibmc_reasm_first(ibmc_reasm_t * r, char *buf, size_t msg_sz, const void *payload, size_t len)
{
    if (r->buf)
        return IBMC_REASM_ERR_BUSY;
    if (len > msg_sz)
        return IBMC_REASM_ERR_OVERFLOW;
    r->buf = buf;
    r->msg_sz = msg_sz;
    r->filled = len;
    memcpy(buf, payload, len);
    return r->filled == r->msg_sz ? IBMC_REASM_COMPLETE : IBMC_REASM_OK;
}

int ibmc_reasm_cont(ibmc_reasm_t * r, const void *payload, size_t len)
{
    if (!r->buf)
        return IBMC_REASM_ERR_ORPHAN;
    if (len > r->msg_sz - r->filled)
        return IBMC_REASM_ERR_OVERFLOW;
    memcpy(r->buf + r->filled, payload, len);
    r->filled += len;
    return r->filled == r->msg_sz ? IBMC_REASM_COMPLETE : IBMC_REASM_OK;
}

char *ibmc_reasm_take(ibmc_reasm_t * r)
{
    char *buf = r->buf;
    ibmc_reasm_init(r);
    return buf;
}

const char *ibmc_reasm_strerror(int err)
{
    switch (err) {
        case IBMC_REASM_ERR_BUSY:
            return "a new message started before the previous one was complete";
        case IBMC_REASM_ERR_ORPHAN:
            return "a continuation packet arrived with no message in progress";
        case IBMC_REASM_ERR_OVERFLOW:
            return "a message carried more bytes than it announced";
    }
    return "no error";
}
