/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Writing and checking the headers of RC packets (formats in ibmc_wire.h):
 * the 8-byte packet header, the message size that only unfinished messages
 * carry, and the 16-byte form of MPIDIG_SEND's eager header.
 *
 * Pure logic: no allocation, no MPICH, no verbs.  The MPICH side
 * (ibmc_am_send.c, ibmc_am_recv.c) decides when a header may be compacted
 * and turns the fields back into an MPIDIG_hdr_t.  The header writers and
 * the compact header's pack and unpack are inline here, so that a small
 * message pays no call for them; parsing a received packet is in
 * ibmc_pkt.c. */

#ifndef IBMC_PKT_H_INCLUDED
#define IBMC_PKT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "ibmc_wire.h"

/* ---- packet header ---- */

/* What a sender puts in a packet header.  has_msg_sz asks for the
 * ibmc_pkt_msg_sz_t extension (the message does not end in this packet). */
typedef struct {
    int type;                   /* IBMC_PKT_* */
    int flags;                  /* IBMC_PKT_F_*, except IBMC_PKT_F_MSG_SZ (from has_msg_sz) */
    int handler_id;
    int src_vci;
    int dst_vci;
    size_t am_hdr_sz;
    int has_msg_sz;
    uint64_t msg_sz;
} ibmc_pkt_info_t;

/* Bytes of header (with the extension if asked for) before the payload. */
static inline size_t ibmc_pkt_hdr_len(int has_msg_sz)
{
    return sizeof(ibmc_pkt_hdr_t) + (has_msg_sz ? sizeof(ibmc_pkt_msg_sz_t) : 0);
}

/* Write the header into `buf`, which has room for ibmc_pkt_hdr_len() bytes,
 * with no credits (the sender adds them when it posts).  Returns the header
 * length.  The caller keeps handler_id, the VCIs and am_hdr_sz within
 * IBMC_PKT_MAX_*. */
static inline size_t ibmc_pkt_put_hdr(void *buf, const ibmc_pkt_info_t * info)
{
    ibmc_pkt_hdr_t h = {
        .type = (uint8_t) info->type,
        .flags = (uint8_t) ((info->flags & ~IBMC_PKT_F_MSG_SZ) |
                            (info->has_msg_sz ? IBMC_PKT_F_MSG_SZ : 0)),
        .handler_id = (uint8_t) info->handler_id,
        .vcis = (uint8_t) ((info->src_vci << 4) | (info->dst_vci & 0xf)),
        .am_hdr_sz = (uint16_t) info->am_hdr_sz
    };
    memcpy(buf, &h, sizeof(h));
    if (info->has_msg_sz) {
        ibmc_pkt_msg_sz_t ext = {.msg_sz = info->msg_sz };
        memcpy((char *) buf + sizeof(h), &ext, sizeof(ext));
    }
    return ibmc_pkt_hdr_len(info->has_msg_sz);
}

/* A received packet, checked. */
typedef struct {
    int type;
    int flags;
    int handler_id;
    int src_vci;
    int dst_vci;
    unsigned credits;
    size_t am_hdr_sz;
    uint64_t msg_sz;            /* the whole message: from the extension, else the payload */
    const char *payload;        /* after the header (and extension) */
    size_t plen;
} ibmc_pkt_view_t;

enum {
    IBMC_PKT_OK = 0,
    IBMC_PKT_ERR_SHORT = -1,    /* shorter than its header */
    IBMC_PKT_ERR_TYPE = -2,     /* unknown packet type */
    IBMC_PKT_ERR_AM_HDR = -3,   /* the AM header does not fit the packet or the message */
    IBMC_PKT_ERR_SIZE = -4,     /* a message size smaller than the bytes already here */
    IBMC_PKT_ERR_FLAGS = -5     /* flags that do not belong to the packet's type */
};

/* The largest message a packet may announce: MPICH counts bytes in a signed
 * MPI_Aint. */
#define IBMC_PKT_MAX_MSG_SZ ((uint64_t) INT64_MAX)

/* Check a packet of `len` bytes and describe it.  For IBMC_PKT_RNDV the
 * payload must also hold `rndv_info_sz` bytes after the AM header. */
int ibmc_pkt_parse(const void *pkt, size_t len, size_t rndv_info_sz, ibmc_pkt_view_t * v);

const char *ibmc_pkt_strerror(int err);

/* A packet that keeps a connection going (the handshake's last step,
 * credits, MPI_Finalize's barrier) rather than carrying the job's
 * messages. */
static inline int ibmc_pkt_is_upkeep(int type)
{
    return type == IBMC_PKT_RTU || type == IBMC_PKT_CREDIT || type == IBMC_PKT_FIN;
}

/* ---- MPIDIG_SEND's header in 16 (or 24) bytes ---- */

typedef struct {
    int32_t src_rank;
    int32_t tag;
    uint32_t context_id;
    int flags;                  /* 0 .. 0x7f */
    int error_bits;             /* 0 .. 0xff */
    int has_sreq;
    uint64_t sreq;
} ibmc_send16_fields_t;

/* Whether the fields have a compact form. */
static inline int ibmc_send16_fits(const ibmc_send16_fields_t * f)
{
    return f->flags >= 0 && f->flags < 0x80 && f->error_bits >= 0 && f->error_bits <= 0xff;
}

/* Bytes of the compact form: 16, or 24 with the request. */
static inline size_t ibmc_send16_len(int has_sreq)
{
    return sizeof(ibmc_send16_t) + (has_sreq ? sizeof(uint64_t) : 0);
}

/* Write the compact form (the caller checked ibmc_send16_fits); returns its length. */
static inline size_t ibmc_send16_pack(void *dst, const ibmc_send16_fields_t * f)
{
    ibmc_send16_t w = {
        .src_rank = f->src_rank,
        .tag = f->tag,
        .context_id = f->context_id,
        .flags = (uint8_t) f->flags,
        .error_bits = (uint8_t) f->error_bits,
        .bits = f->has_sreq ? IBMC_SEND16_F_SREQ : 0
    };
    memcpy(dst, &w, sizeof(w));
    if (f->has_sreq)
        memcpy((char *) dst + sizeof(w), &f->sreq, sizeof(f->sreq));
    return ibmc_send16_len(f->has_sreq);
}

/* Read a compact header from the first `len` bytes of `src`; returns its
 * length, or 0 if `len` is too short. */
static inline size_t ibmc_send16_unpack(const void *src, size_t len, ibmc_send16_fields_t * f)
{
    ibmc_send16_t w;
    if (len < sizeof(w))
        return 0;
    memcpy(&w, src, sizeof(w));
    int has_sreq = (w.bits & IBMC_SEND16_F_SREQ) != 0;
    if (len < ibmc_send16_len(has_sreq))
        return 0;
    *f = (ibmc_send16_fields_t) {
        .src_rank = w.src_rank,
        .tag = w.tag,
        .context_id = w.context_id,
        .flags = w.flags,
        .error_bits = w.error_bits,
        .has_sreq = has_sreq
    };
    if (has_sreq)
        memcpy(&f->sreq, (const char *) src + sizeof(w), sizeof(f->sreq));
    return ibmc_send16_len(has_sreq);
}

#endif /* IBMC_PKT_H_INCLUDED */
