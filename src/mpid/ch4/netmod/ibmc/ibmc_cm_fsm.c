/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include "ibmc_cm_fsm.h"

void ibmc_cm_init(ibmc_cm_t * cm)
{
    cm->state = IBMC_CM_IDLE;
    cm->remote_qpn = 0;
    cm->retry_at = 0;
    cm->interval = 0;
    cm->deadline = 0;
    cm->retransmits = 0;
}

/* The next retransmission, or the deadline if that comes first: the
 * connection fails at its deadline, not up to max_retry after it. */
static double next_timer(const ibmc_cm_t * cm, double now)
{
    return now + cm->interval < cm->deadline ? now + cm->interval : cm->deadline;
}

/* Start retransmitting.  The deadline runs from the first REQ or REP of the
 * handshake and is not extended when a simultaneous connect changes state. */
static void arm(ibmc_cm_t * cm, double now, const ibmc_cm_timing_t * t, int keep_deadline)
{
    cm->interval = t->first_retry;
    if (!keep_deadline)
        cm->deadline = now + t->timeout;
    cm->retry_at = next_timer(cm, now);
}

/* A retry timer fired: send `resend` again with doubled backoff, or give up
 * once the deadline has passed. */
static unsigned retransmit(ibmc_cm_t * cm, double now, const ibmc_cm_timing_t * t, unsigned resend)
{
    if (now >= cm->deadline) {
        cm->state = IBMC_CM_FAILED;
        return IBMC_CM_ACT_FAIL;
    }
    cm->retransmits++;
    cm->interval = cm->interval * 2 < t->max_retry ? cm->interval * 2 : t->max_retry;
    cm->retry_at = next_timer(cm, now);
    return resend;
}

static unsigned connect_to(ibmc_cm_t * cm, uint32_t qpn)
{
    cm->remote_qpn = qpn;
    return IBMC_CM_ACT_CONNECT;
}

unsigned ibmc_cm_step(ibmc_cm_t * cm, ibmc_cm_event_t ev, uint32_t qpn, double now,
                      const ibmc_cm_timing_t * t)
{
    unsigned act = 0;

    switch (cm->state) {
        case IBMC_CM_IDLE:
            if (ev == IBMC_CM_EV_WANT_SEND) {
                act = IBMC_CM_ACT_CREATE_QP | IBMC_CM_ACT_SEND_REQ;
                cm->state = IBMC_CM_REQ_SENT;
                arm(cm, now, t, 0);
            } else if (ev == IBMC_CM_EV_RECV_REQ) {
                act = IBMC_CM_ACT_CREATE_QP | connect_to(cm, qpn) | IBMC_CM_ACT_SEND_REP;
                cm->state = IBMC_CM_REP_SENT;
                arm(cm, now, t, 0);
            } else if (ev != IBMC_CM_EV_TIMER) {
                /* a REP or RC packet without a QP: left over from nothing we sent */
                act = IBMC_CM_ACT_STALE;
            }
            break;

        case IBMC_CM_REQ_SENT:
            if (ev == IBMC_CM_EV_RECV_REQ) {
                /* simultaneous connect: both QPs exist, connect them to each other */
                act = connect_to(cm, qpn) | IBMC_CM_ACT_SEND_REP;
                cm->state = IBMC_CM_REP_SENT;
                arm(cm, now, t, 1);
            } else if (ev == IBMC_CM_EV_RECV_REP) {
                act = connect_to(cm, qpn) | IBMC_CM_ACT_SEND_RTU | IBMC_CM_ACT_FLUSH;
                cm->state = IBMC_CM_CONNECTED;
            } else if (ev == IBMC_CM_EV_TIMER && now >= cm->retry_at) {
                act = retransmit(cm, now, t, IBMC_CM_ACT_SEND_REQ);
            } else if (ev == IBMC_CM_EV_RECV_RC) {
                act = IBMC_CM_ACT_STALE;
            }
            break;

        case IBMC_CM_REP_SENT:
            if (ev == IBMC_CM_EV_RECV_REQ) {
                /* our REP was lost and the peer asks again; a different QP
                 * number would mean a peer we do not know */
                act = (qpn == cm->remote_qpn) ? IBMC_CM_ACT_SEND_REP : IBMC_CM_ACT_STALE;
            } else if (ev == IBMC_CM_EV_RECV_REP) {
                if (qpn == cm->remote_qpn) {
                    /* the peer connected after our REQ: tell it we are ready too */
                    act = IBMC_CM_ACT_SEND_RTU | IBMC_CM_ACT_FLUSH;
                    cm->state = IBMC_CM_CONNECTED;
                } else {
                    act = IBMC_CM_ACT_STALE;
                }
            } else if (ev == IBMC_CM_EV_RECV_RC) {
                /* the peer only sends over RC once it is connected */
                act = IBMC_CM_ACT_FLUSH;
                cm->state = IBMC_CM_CONNECTED;
            } else if (ev == IBMC_CM_EV_TIMER && now >= cm->retry_at) {
                act = retransmit(cm, now, t, IBMC_CM_ACT_SEND_REP);
            }
            break;

        case IBMC_CM_CONNECTED:
            if (ev == IBMC_CM_EV_RECV_REQ) {
                /* a late retransmission: answering again is harmless */
                act = (qpn == cm->remote_qpn) ? IBMC_CM_ACT_SEND_REP : IBMC_CM_ACT_STALE;
            } else if (ev == IBMC_CM_EV_RECV_REP && qpn != cm->remote_qpn) {
                act = IBMC_CM_ACT_STALE;
            }
            break;

        case IBMC_CM_FAILED:
            break;
    }
    return act;
}

int ibmc_cm_has_timer(const ibmc_cm_t * cm)
{
    return cm->state == IBMC_CM_REQ_SENT || cm->state == IBMC_CM_REP_SENT;
}

const char *ibmc_cm_state_name(ibmc_cm_state_t state)
{
    switch (state) {
        case IBMC_CM_IDLE:
            return "idle";
        case IBMC_CM_REQ_SENT:
            return "req-sent";
        case IBMC_CM_REP_SENT:
            return "rep-sent";
        case IBMC_CM_CONNECTED:
            return "connected";
        case IBMC_CM_FAILED:
            return "failed";
    }
    return "?";
}
