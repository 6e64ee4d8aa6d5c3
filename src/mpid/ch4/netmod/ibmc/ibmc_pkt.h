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
 * and turns the fields back into an MPIDIG_hdr_t. */

#ifndef IBMC_PKT_H_INCLUDED
#define IBMC_PKT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
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
size_t ibmc_pkt_hdr_len(int has_msg_sz);

/* Write the header into `buf`, which has room for ibmc_pkt_hdr_len() bytes,
 * with no credits (the sender adds them when it posts).  Returns the header
 * length.  The caller keeps handler_id, the VCIs and am_hdr_sz within
 * IBMC_PKT_MAX_*. */
size_t ibmc_pkt_put_hdr(void *buf, const ibmc_pkt_info_t * info);

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

/* Check a packet of `len` bytes and describe it.  For IBMC_PKT_RNDV the
 * payload must also hold `rndv_info_sz` bytes after the AM header. */
int ibmc_pkt_parse(const void *pkt, size_t len, size_t rndv_info_sz, ibmc_pkt_view_t * v);

const char *ibmc_pkt_strerror(int err);

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
int ibmc_send16_fits(const ibmc_send16_fields_t * f);

/* Bytes of the compact form: 16, or 24 with the request. */
size_t ibmc_send16_len(int has_sreq);

/* Write the compact form (the caller checked ibmc_send16_fits); returns its length. */
size_t ibmc_send16_pack(void *dst, const ibmc_send16_fields_t * f);

/* Read a compact header from the first `len` bytes of `src`; returns its
 * length, or 0 if `len` is too short. */
size_t ibmc_send16_unpack(const void *src, size_t len, ibmc_send16_fields_t * f);

#endif /* IBMC_PKT_H_INCLUDED */
