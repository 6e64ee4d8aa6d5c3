/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Connection state machine for one RC queue pair to one peer.
 *
 * Queue pairs are created on first use.  The handshake travels as datagrams
 * over the process's UD queue pair (REQ and REP, each carrying the sender's RC
 * QP number) and finishes with an RTU packet over the new RC connection:
 *
 *   initiator                        acceptor
 *   IDLE --want send--> REQ_SENT
 *              REQ(qpn_i) ---------> IDLE: create QP, connect to qpn_i,
 *                                    REP_SENT (holds its sends)
 *   REQ_SENT: connect to qpn_a <---- REP(qpn_a)
 *   CONNECTED, send RTU over RC ---> REP_SENT: any RC packet -> CONNECTED
 *
 * Every peer has a single QP and every REQ names it, so two processes that
 * connect to each other at the same time simply connect their two QPs to each
 * other: a REQ received in REQ_SENT is answered like one received in IDLE.
 * A side only sends data once it knows that the peer's QP is ready to
 * receive: a REP, or a packet over RC, proves it.  Lost datagrams are repaired
 * by retransmitting REQ (in REQ_SENT) or REP (in REP_SENT) with exponential
 * backoff until a deadline, after which the connection fails.
 *
 * This file is pure logic: the caller performs the returned actions. */

#ifndef IBMC_CM_FSM_H_INCLUDED
#define IBMC_CM_FSM_H_INCLUDED

#include <stdint.h>

typedef enum {
    IBMC_CM_IDLE = 0,
    IBMC_CM_REQ_SENT,
    IBMC_CM_REP_SENT,
    IBMC_CM_CONNECTED,
    IBMC_CM_FAILED
} ibmc_cm_state_t;

typedef enum {
    IBMC_CM_EV_WANT_SEND,       /* a message is queued for this peer */
    IBMC_CM_EV_RECV_REQ,        /* the peer's REQ arrived (qpn = its RC QP) */
    IBMC_CM_EV_RECV_REP,        /* the peer's REP arrived (qpn = its RC QP) */
    IBMC_CM_EV_RECV_RC,         /* a packet arrived over the RC connection */
    IBMC_CM_EV_TIMER            /* the caller's clock passed retry_at */
} ibmc_cm_event_t;

/* Actions, in the order the caller must perform them. */
enum {
    IBMC_CM_ACT_CREATE_QP = 1 << 0,     /* create the RC QP and move it to INIT */
    IBMC_CM_ACT_CONNECT = 1 << 1,       /* move the QP to RTR/RTS towards remote_qpn */
    IBMC_CM_ACT_SEND_REQ = 1 << 2,
    IBMC_CM_ACT_SEND_REP = 1 << 3,
    IBMC_CM_ACT_SEND_RTU = 1 << 4,      /* post an RTU packet on the RC QP */
    IBMC_CM_ACT_FLUSH = 1 << 5,         /* the connection is usable: send what is queued */
    IBMC_CM_ACT_FAIL = 1 << 6,          /* deadline passed: report the peer as unreachable */
    IBMC_CM_ACT_STALE = 1 << 7          /* a message that contradicts the state; ignored */
};

typedef struct {
    double first_retry;         /* seconds before the first retransmission */
    double max_retry;           /* cap of the exponential backoff */
    double timeout;             /* seconds from this side's first REQ or REP to failure */
} ibmc_cm_timing_t;

typedef struct {
    ibmc_cm_state_t state;
    uint32_t remote_qpn;        /* valid once CONNECT was returned */
    double retry_at;            /* when to deliver IBMC_CM_EV_TIMER */
    double interval;            /* current backoff interval */
    double deadline;            /* when IBMC_CM_EV_TIMER turns into FAIL */
    unsigned retransmits;       /* REQ/REP datagrams sent again, for statistics */
} ibmc_cm_t;

void ibmc_cm_init(ibmc_cm_t * cm);

/* Apply one event at time `now` and return the actions (a bit set of
 * IBMC_CM_ACT_*).  `qpn` is the peer's RC QP number for RECV_REQ/RECV_REP. */
unsigned ibmc_cm_step(ibmc_cm_t * cm, ibmc_cm_event_t ev, uint32_t qpn, double now,
                      const ibmc_cm_timing_t * timing);

/* Whether the state waits for a timer (REQ_SENT or REP_SENT). */
int ibmc_cm_has_timer(const ibmc_cm_t * cm);

const char *ibmc_cm_state_name(ibmc_cm_state_t state);

#endif /* IBMC_CM_FSM_H_INCLUDED */
