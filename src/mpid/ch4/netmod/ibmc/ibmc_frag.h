/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Splitting an active message into packets, and putting it back together.
 *
 * A message is the CH4 AM header followed by its data.  The first packet
 * carries the packet header, the whole AM header and as much data as fits;
 * continuation packets carry data only.  One RC queue pair delivers in order
 * and the sender never interleaves two messages to the same peer, so the
 * receiver needs one reassembly slot per peer.
 *
 * Pure logic: no allocation, no MPICH, no verbs. */

#ifndef IBMC_FRAG_H_INCLUDED
#define IBMC_FRAG_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

/* ---- sender ---- */

typedef struct {
    size_t am_hdr_sz;
    size_t data_sz;
    size_t data_off;            /* data bytes already placed in packets */
    int first_done;
} ibmc_frag_tx_t;

typedef struct {
    int is_first;               /* 1: carries the AM header */
    size_t data_off;            /* offset of this packet's data in the message data */
    size_t data_len;            /* data bytes in this packet */
} ibmc_frag_t;

void ibmc_frag_tx_init(ibmc_frag_tx_t * tx, size_t am_hdr_sz, size_t data_sz);

/* Plan the next packet whose payload (after the packet header) may hold
 * `payload_cap` bytes.  Returns 0 when nothing is left to send, 1 otherwise.
 * The caller requires am_hdr_sz <= payload_cap. */
int ibmc_frag_next(ibmc_frag_tx_t * tx, size_t payload_cap, ibmc_frag_t * out);

int ibmc_frag_tx_done(const ibmc_frag_tx_t * tx);

/* ---- receiver ---- */

typedef struct {
    char *buf;                  /* AM header + data, owned by the caller */
    size_t msg_sz;
    size_t filled;
} ibmc_reasm_t;

enum {
    IBMC_REASM_OK = 0,          /* more packets expected */
    IBMC_REASM_COMPLETE = 1,    /* buf holds the whole message */
    IBMC_REASM_ERR_BUSY = -1,   /* a first packet while a message was in progress */
    IBMC_REASM_ERR_ORPHAN = -2, /* a continuation with no message in progress */
    IBMC_REASM_ERR_OVERFLOW = -3        /* more bytes than the message announced */
};

void ibmc_reasm_init(ibmc_reasm_t * r);
int ibmc_reasm_active(const ibmc_reasm_t * r);

/* Start a message of msg_sz bytes into `buf` (msg_sz bytes, caller-owned)
 * with the first packet's payload. */
int ibmc_reasm_first(ibmc_reasm_t * r, char *buf, size_t msg_sz, const void *payload, size_t len);

/* Append a continuation packet's payload. */
int ibmc_reasm_cont(ibmc_reasm_t * r, const void *payload, size_t len);

/* Hand the completed buffer back to the caller and reset the slot. */
char *ibmc_reasm_take(ibmc_reasm_t * r);

const char *ibmc_reasm_strerror(int err);

#endif /* IBMC_FRAG_H_INCLUDED */
