/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Fuzz target: the connection state machine (ibmc_cm_fsm.h).
 *
 * Bytes 0-2 give the timing (first_retry, max_retry, timeout, in 1/8 s),
 * byte 3 bit 0 the mode:
 *   0: one FSM fed an arbitrary sequence of (event, qpn, time step);
 *   1: two peers, A and B, whose actions travel through a lossy datagram
 *      network (REQ/REP can be lost, duplicated, reordered) and a reliable
 *      RC channel; the fuzzer schedules deliveries, losses, timers and
 *      clock steps, then a fair, lossless drain runs to quiescence.
 *
 * Invariants of every step: FAILED is never left and acts no more; states
 * move only along the documented edges; CONNECT is returned at most once,
 * for RECV_REQ/RECV_REP, after (or with) CREATE_QP, with remote_qpn equal to
 * the event's qpn, and remote_qpn changes only then; no action set combines
 * contradictory actions (FAIL or STALE with anything, REQ with REP or
 * CONNECT, RTU without FLUSH, ...); SEND_REP only once connected, to the
 * known peer; FLUSH exactly when CONNECTED is entered, on proof that the
 * peer is ready (its REP or an RC packet); a timer does nothing before
 * retry_at, retransmits with min(2 x interval, max_retry) backoff before
 * the deadline (first REQ/REP + timeout, not extended) and FAILs after it.
 * Two peers: a side sends RTU or data only when the peer's QP is connected
 * to its own; after the drain nobody waits for a timer, a side that wanted
 * to send is connected unless one failed, and no connection is half open. */

#include "fuzz_util.h"
#include "ibmc_cm_fsm.h"

typedef struct {
    ibmc_cm_t cm;
    uint32_t qpn;               /* own QP number once created (two-peer mode) */
    int created, connected, wanted;
    uint32_t conn_qpn;
    int started;                /* first REQ or REP sent, at t0 */
    double t0;
} peer_t;

#define ALL_ACTS 0xffu

static int edge_ok(ibmc_cm_state_t from, ibmc_cm_state_t to)
{
    if (from == to)
        return 1;
    switch (from) {
        case IBMC_CM_IDLE:
            return to == IBMC_CM_REQ_SENT || to == IBMC_CM_REP_SENT;
        case IBMC_CM_REQ_SENT:
            return to == IBMC_CM_REP_SENT || to == IBMC_CM_CONNECTED || to == IBMC_CM_FAILED;
        case IBMC_CM_REP_SENT:
            return to == IBMC_CM_CONNECTED || to == IBMC_CM_FAILED;
        default:
            return 0;
    }
}

static int timed(ibmc_cm_state_t s)
{
    return s == IBMC_CM_REQ_SENT || s == IBMC_CM_REP_SENT;
}

/* One ibmc_cm_step with every per-step invariant checked. */
static unsigned step(peer_t * p, ibmc_cm_event_t ev, uint32_t qpn, double now,
                     const ibmc_cm_timing_t * t)
{
    ibmc_cm_t b = p->cm;
    unsigned act = ibmc_cm_step(&p->cm, ev, qpn, now, t);
    const ibmc_cm_t *a = &p->cm;
    ibmc_cm_state_t from = b.state, to = a->state;
    TRACE("t=%g ev %d qpn 0x%x: %s -> %s, actions 0x%x", now, (int) ev, qpn,
          ibmc_cm_state_name(from), ibmc_cm_state_name(to), act);

    CHECK((act & ~ALL_ACTS) == 0, "unknown action bits 0x%x", act);
    CHECK(to >= IBMC_CM_IDLE && to <= IBMC_CM_FAILED, "state %d", (int) to);
    CHECK(edge_ok(from, to), "%s -> %s", ibmc_cm_state_name(from), ibmc_cm_state_name(to));
    CHECK(ibmc_cm_has_timer(a) == timed(to), "has_timer in %s", ibmc_cm_state_name(to));
    if (from == IBMC_CM_FAILED)
        CHECK(act == 0 && a->remote_qpn == b.remote_qpn, "FAILED acted: 0x%x", act);
    if (to == IBMC_CM_FAILED && from != IBMC_CM_FAILED)
        CHECK(act == IBMC_CM_ACT_FAIL, "entered FAILED with actions 0x%x", act);

    /* contradictions */
    if (act & (IBMC_CM_ACT_FAIL | IBMC_CM_ACT_STALE))
        CHECK(act == IBMC_CM_ACT_FAIL || act == IBMC_CM_ACT_STALE,
              "FAIL/STALE with other actions: 0x%x", act);
    if (act & IBMC_CM_ACT_SEND_REQ)
        CHECK(!(act & (IBMC_CM_ACT_SEND_REP | IBMC_CM_ACT_CONNECT | IBMC_CM_ACT_SEND_RTU |
                       IBMC_CM_ACT_FLUSH)), "REQ with REP/CONNECT/RTU/FLUSH: 0x%x", act);
    if (act & IBMC_CM_ACT_SEND_RTU)
        CHECK(act & IBMC_CM_ACT_FLUSH, "RTU without FLUSH: 0x%x", act);
    if (ev == IBMC_CM_EV_WANT_SEND)
        CHECK(act == 0 || (from == IBMC_CM_IDLE &&
                           act == (IBMC_CM_ACT_CREATE_QP | IBMC_CM_ACT_SEND_REQ)),
              "WANT_SEND in %s gave 0x%x", ibmc_cm_state_name(from), act);

    if (act & IBMC_CM_ACT_STALE) {
        CHECK(ev != IBMC_CM_EV_WANT_SEND && ev != IBMC_CM_EV_TIMER, "STALE for event %d", ev);
        CHECK(to == from && a->remote_qpn == b.remote_qpn && a->retry_at == b.retry_at &&
              a->deadline == b.deadline && a->retransmits == b.retransmits,
              "STALE changed the state");
    }
    if (act & IBMC_CM_ACT_CREATE_QP) {
        CHECK(!p->created && from == IBMC_CM_IDLE, "CREATE_QP twice or outside IDLE");
        p->created = 1;
    }
    if (act & IBMC_CM_ACT_CONNECT) {
        CHECK(ev == IBMC_CM_EV_RECV_REQ || ev == IBMC_CM_EV_RECV_REP, "CONNECT on event %d", ev);
        CHECK(a->remote_qpn == qpn, "CONNECT to 0x%x, event's qpn 0x%x", a->remote_qpn, qpn);
        CHECK(p->created, "CONNECT before CREATE_QP");
        CHECK(!p->connected, "CONNECT twice (first to 0x%x, now 0x%x)", p->conn_qpn, qpn);
        p->connected = 1;
        p->conn_qpn = qpn;
    } else {
        CHECK(a->remote_qpn == b.remote_qpn, "remote_qpn changed without CONNECT");
    }
    if (act & IBMC_CM_ACT_SEND_REQ) {
        CHECK(p->created && to == IBMC_CM_REQ_SENT, "REQ without a QP or outside REQ_SENT");
    }
    if (act & IBMC_CM_ACT_SEND_REP) {
        CHECK(p->connected, "REP before the QP is connected");
        CHECK(to == IBMC_CM_REP_SENT || to == IBMC_CM_CONNECTED, "REP in %s",
              ibmc_cm_state_name(to));
        if (ev == IBMC_CM_EV_RECV_REQ)
            CHECK(qpn == a->remote_qpn, "REP to an unknown QP 0x%x", qpn);
    }
    if (act & (IBMC_CM_ACT_SEND_RTU | IBMC_CM_ACT_FLUSH))
        CHECK(p->connected && to == IBMC_CM_CONNECTED, "RTU/FLUSH without a connected QP");
    CHECK(!!(act & IBMC_CM_ACT_FLUSH) == (to == IBMC_CM_CONNECTED && from != IBMC_CM_CONNECTED),
          "FLUSH 0x%x on %s -> %s", act, ibmc_cm_state_name(from), ibmc_cm_state_name(to));
    if (act & IBMC_CM_ACT_FLUSH) {
        CHECK(ev == IBMC_CM_EV_RECV_REP || ev == IBMC_CM_EV_RECV_RC, "FLUSH without proof");
        if (ev == IBMC_CM_EV_RECV_REP)
            CHECK(qpn == a->remote_qpn, "FLUSH on a REP from another QP");
    }

    /* timers: the deadline runs from the first REQ or REP */
    int sends = (act & (IBMC_CM_ACT_SEND_REQ | IBMC_CM_ACT_SEND_REP)) != 0;
    if (sends && !p->started) {
        p->started = 1;
        p->t0 = now;
    }
    double deadline = p->t0 + t->timeout;
    if (timed(to) && from != to) {
        double first = now + t->first_retry < deadline ? now + t->first_retry : deadline;
        CHECK(a->retry_at == first, "retry not armed at first_retry (or the deadline)");
        CHECK(a->deadline == deadline, "deadline %g, expected %g", a->deadline, deadline);
    }
    /* ibmc_cm_timing_t.timeout is "seconds from this side's first REQ or REP
     * to failure", and the caller delivers TIMER only once retry_at passed:
     * so the FSM must not ask for its next timer past the deadline, or the
     * connection fails up to max_retry late (corpus seed deadline-overshoot) */
    if (timed(to))
        CHECK(a->retry_at <= (deadline > now ? deadline : now),
              "next timer at %g, past the deadline %g (t0 %g + timeout %g)", a->retry_at,
              deadline, p->t0, t->timeout);
    if (ev == IBMC_CM_EV_TIMER) {
        if (!timed(from) || now < b.retry_at) {
            CHECK(act == 0 && to == from, "timer before retry_at or without one: 0x%x", act);
        } else if (act == IBMC_CM_ACT_FAIL) {
            CHECK(p->started && now >= deadline, "FAIL at %g, deadline %g", now, deadline);
        } else {
            CHECK(now < deadline, "retransmission at %g past the deadline %g", now, deadline);
            CHECK(act == (from == IBMC_CM_REQ_SENT ? IBMC_CM_ACT_SEND_REQ : IBMC_CM_ACT_SEND_REP),
                  "timer in %s gave 0x%x", ibmc_cm_state_name(from), act);
            double iv = b.interval * 2 < t->max_retry ? b.interval * 2 : t->max_retry;
            double next = now + iv < deadline ? now + iv : deadline;
            CHECK(a->retransmits == b.retransmits + 1 && a->interval == iv &&
                  a->retry_at == next, "backoff (capped at the deadline)");
        }
    } else {
        CHECK(act != IBMC_CM_ACT_FAIL, "FAIL on event %d", ev);
    }
    return act;
}

/* ---- mode 0: one FSM, arbitrary events ---- */

static void run_single(fz_t * in, const ibmc_cm_timing_t * t)
{
    peer_t p = { 0 };
    double now = 0;
    ibmc_cm_init(&p.cm);
    CHECK(p.cm.state == IBMC_CM_IDLE && !ibmc_cm_has_timer(&p.cm), "init");
    static const uint32_t qpns[3] = { 0x1234, 0x777, 0 };
    for (int i = 0; i < 256 && !fz_empty(in); i++) {
        uint8_t b = fz_u8(in);
        uint8_t dt = fz_u8(in);
        ibmc_cm_event_t ev = (ibmc_cm_event_t) ((b & 7) % 5);
        uint32_t qpn = (b >> 3 & 3) == 3 ? fz_u32(in) : qpns[b >> 3 & 3];
        if (dt & 0x80) {
            if (p.cm.retry_at > now)
                now = p.cm.retry_at;    /* exactly when the timer is due */
        } else {
            now += (dt & 0x7f) / 16.0;
        }
        step(&p, ev, qpn, now, t);
    }
}

/* ---- mode 1: two peers and a network ---- */

#define QPN_A 0x100
#define QPN_B 0x200
#define NDGRAM 32

typedef struct {
    int to;                     /* 0: A, 1: B */
    ibmc_cm_event_t ev;         /* RECV_REQ or RECV_REP */
    uint32_t qpn;
} dgram_t;

typedef struct {
    peer_t p[2];
    dgram_t net[NDGRAM];
    int nnet;
    unsigned rc[2];             /* RC packets in flight to A, to B */
    double now;
    const ibmc_cm_timing_t *t;
} world_t;

static void post_dgram(world_t * w, int to, ibmc_cm_event_t ev, uint32_t qpn)
{
    if (w->nnet < NDGRAM)       /* a full network loses it, as UD may */
        w->net[w->nnet++] = (dgram_t) {.to = to,.ev = ev,.qpn = qpn };
}

/* Apply one event to peer i and carry out its actions. */
static void apply(world_t * w, int i, ibmc_cm_event_t ev, uint32_t qpn)
{
    peer_t *me = &w->p[i], *peer = &w->p[1 - i];
    if (ev == IBMC_CM_EV_WANT_SEND)
        me->wanted = 1;
    if (ev == IBMC_CM_EV_RECV_RC)
        CHECK(me->connected && me->conn_qpn == peer->qpn, "RC packet to an unconnected QP");
    unsigned act = step(me, ev, qpn, w->now, w->t);
    if (act & IBMC_CM_ACT_CREATE_QP)
        me->qpn = i ? QPN_B : QPN_A;
    if (act & IBMC_CM_ACT_CONNECT)
        CHECK(peer->created && qpn == peer->qpn, "CONNECT to a QP the peer does not have");
    if (act & IBMC_CM_ACT_SEND_REQ)
        post_dgram(w, 1 - i, IBMC_CM_EV_RECV_REQ, me->qpn);
    if (act & IBMC_CM_ACT_SEND_REP)
        post_dgram(w, 1 - i, IBMC_CM_EV_RECV_REP, me->qpn);
    if (act & (IBMC_CM_ACT_SEND_RTU | IBMC_CM_ACT_FLUSH)) {
        /* the peer's QP must already be connected to ours */
        CHECK(peer->connected && peer->conn_qpn == me->qpn && me->conn_qpn == peer->qpn,
              "side %c sends over RC before the peer's QP is ready", "AB"[i]);
        if (act & IBMC_CM_ACT_SEND_RTU || me->wanted)
            w->rc[1 - i]++;
    }
}

static void deliver(world_t * w, int k)
{
    dgram_t d = w->net[k];
    memmove(&w->net[k], &w->net[k + 1], (size_t) (w->nnet - k - 1) * sizeof(d));
    w->nnet--;
    apply(w, d.to, d.ev, d.qpn);
}

static void fire_timer(world_t * w, int i)
{
    if (!ibmc_cm_has_timer(&w->p[i].cm))
        return;
    if (w->p[i].cm.retry_at > w->now)
        w->now = w->p[i].cm.retry_at;
    apply(w, i, IBMC_CM_EV_TIMER, 0);
}

static void run_pair(fz_t * in, const ibmc_cm_timing_t * t)
{
    world_t w = {.t = t };
    ibmc_cm_init(&w.p[0].cm);
    ibmc_cm_init(&w.p[1].cm);

    for (int i = 0; i < 256 && !fz_empty(in); i++) {
        uint8_t b = fz_u8(in);
        int side = b >> 7;
        uint8_t arg = fz_u8(in);
        switch (b % 8) {
            case 0:
            case 1:
                apply(&w, side, IBMC_CM_EV_WANT_SEND, 0);
                break;
            case 2:            /* deliver a datagram, maybe out of order */
                if (w.nnet)
                    deliver(&w, arg % w.nnet);
                break;
            case 3:            /* lose one */
                if (w.nnet) {
                    int k = arg % w.nnet;
                    memmove(&w.net[k], &w.net[k + 1], (size_t) (w.nnet - k - 1) * sizeof(dgram_t));
                    w.nnet--;
                }
                break;
            case 4:            /* duplicate one */
                if (w.nnet)
                    post_dgram(&w, w.net[arg % w.nnet].to, w.net[arg % w.nnet].ev,
                               w.net[arg % w.nnet].qpn);
                break;
            case 5:            /* an RC packet arrives */
                if (w.rc[side]) {
                    w.rc[side]--;
                    apply(&w, side, IBMC_CM_EV_RECV_RC, 0);
                }
                break;
            case 6:
                fire_timer(&w, side);
                break;
            default:
                w.now += arg / 16.0;
                break;
        }
    }

    /* a fair, lossless network from now on */
    for (int i = 0; i < 100000; i++) {
        if (w.nnet) {
            deliver(&w, 0);
        } else if (w.rc[0] || w.rc[1]) {
            int side = w.rc[0] ? 0 : 1;
            w.rc[side]--;
            apply(&w, side, IBMC_CM_EV_RECV_RC, 0);
        } else if (ibmc_cm_has_timer(&w.p[0].cm) || ibmc_cm_has_timer(&w.p[1].cm)) {
            int side = !ibmc_cm_has_timer(&w.p[0].cm) ? 1 :
                !ibmc_cm_has_timer(&w.p[1].cm) ? 0 :
                w.p[0].cm.retry_at <= w.p[1].cm.retry_at ? 0 : 1;
            w.now += 1 / 64.0;  /* the clock moves between two polls */
            fire_timer(&w, side);
        } else {
            break;
        }
    }
    ibmc_cm_state_t a = w.p[0].cm.state, b = w.p[1].cm.state;
    TRACE("after the drain: A %s, B %s", ibmc_cm_state_name(a), ibmc_cm_state_name(b));
    CHECK(!timed(a) && !timed(b), "no quiescence: %s / %s", ibmc_cm_state_name(a),
          ibmc_cm_state_name(b));
    if (a != IBMC_CM_FAILED && b != IBMC_CM_FAILED) {
        CHECK((a == IBMC_CM_CONNECTED) == (b == IBMC_CM_CONNECTED), "half-open: %s / %s",
              ibmc_cm_state_name(a), ibmc_cm_state_name(b));
        for (int i = 0; i < 2; i++)
            CHECK(!w.p[i].wanted || w.p[i].cm.state == IBMC_CM_CONNECTED,
                  "side %c wanted to send and is %s", "AB"[i],
                  ibmc_cm_state_name(w.p[i].cm.state));
    }
    if (a == IBMC_CM_CONNECTED && b == IBMC_CM_CONNECTED)
        CHECK(w.p[0].cm.remote_qpn == QPN_B && w.p[1].cm.remote_qpn == QPN_A,
              "connected to the wrong QPs");
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size)
{
    if (size < 4)
        return 0;
    ibmc_cm_timing_t t = {
        .first_retry = (data[0] % 32) / 8.0,
        .max_retry = (data[1] % 64) / 8.0,
        .timeout = data[2] / 8.0
    };
    fz_t in;
    fz_init(&in, data + 4, size - 4);
    if (data[3] & 1)
        run_pair(&in, &t);
    else
        run_single(&in, &t);
    return 0;
}
