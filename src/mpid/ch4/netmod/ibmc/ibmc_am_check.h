/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* What an eager or rendezvous packet may ask of MPICH's active-message layer.
 *
 * A parsed packet (ibmc_pkt.h) names a handler, two VCIs and an AM header
 * size.  Before MPICH's handler runs, each must be one this process can
 * honour: the handler is registered, it is given at least the header struct
 * it reads, the VCI exists, and a rendezvous carries only a point-to-point
 * send (the only handler whose data the rendezvous protocol knows how to
 * place).  A packet that asks for anything else came from a broken or hostile
 * peer, and the caller ends the job with the reason this module names.
 *
 * Pure logic: no MPICH, no verbs.  The netmod fills the rules from
 * MPIDIG_global at init (ibmc_am_recv.c); host tests fill them by hand. */

#ifndef IBMC_AM_CHECK_H_INCLUDED
#define IBMC_AM_CHECK_H_INCLUDED

#include "ibmc_pkt.h"
#include "ibmc_wire.h"

typedef struct {
    unsigned n_handlers;        /* handler ids below this may exist (<= IBMC_PKT_MAX_HANDLERS) */
    unsigned n_vcis;            /* VCIs this process has (<= IBMC_PKT_MAX_VCIS) */
    int rndv_handler;           /* the one handler a rendezvous may carry */
    unsigned char registered[IBMC_PKT_MAX_HANDLERS];
    /* the least AM header each handler reads; 0 for handlers that have no
     * fixed struct (registered at run time) */
    unsigned short hdr_min[IBMC_PKT_MAX_HANDLERS];
} ibmc_am_rules_t;

enum {
    IBMC_AM_OK = 0,
    IBMC_AM_ERR_HANDLER = -1,   /* no such handler */
    IBMC_AM_ERR_VCI = -2,       /* a VCI that does not exist */
    IBMC_AM_ERR_HDR = -3,       /* an AM header shorter than its handler reads */
    IBMC_AM_ERR_RNDV = -4       /* a rendezvous for another handler than send */
};

/* IBMC_AM_OK if the AM or RNDV packet `v` may be handed to its handler,
 * else the first rule it breaks.  A header in the compact form
 * (IBMC_PKT_F_SEND16) is measured when it is expanded, not here. */
int ibmc_am_check(const ibmc_pkt_view_t * v, const ibmc_am_rules_t * r);

/* A sentence for an IBMC_AM_ERR_* code, for the protocol error. */
const char *ibmc_am_strerror(int rc);

#endif /* IBMC_AM_CHECK_H_INCLUDED */
