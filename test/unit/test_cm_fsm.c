/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Host unit tests of ibmc_cm_fsm.c, the on-demand RC connection state machine.
 *
 * Besides direct ibmc_cm_step() checks, a small discrete-event simulator plays
 * the caller's part for endpoints A (RC qpn 0x100, rank 0) and B (qpn 0x200,
 * rank 1), or for one process connecting to itself:
 *   - REQ/REP travel as datagrams that may be dropped, duplicated and
 *     reordered (random latencies);
 *   - the RC connection is reliable and in order, but, like a real HCA, it
 *     only carries a packet if the receiver's QP has been connected to the
 *     sender's QP: every RC send asserts that (the protocol invariant);
 *   - TIMER is delivered when the simulated clock passes cm.retry_at.
 * The actions are performed exactly as a caller must, in the documented
 * order: CREATE_QP, CONNECT (to cm.remote_qpn), SEND_REQ, SEND_REP, SEND_RTU
 * (an RTU packet on RC), FLUSH (start sending queued data over RC), FAIL. */

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_cm_fsm.h"
#include "tap.h"
#include "rng.h"

#define QPN_A 0x100u
#define QPN_B 0x200u
#define NEVER 1e300

static const ibmc_cm_timing_t timing = { 0.05, 2.0, 120.0 };

/* ======================================================================
 * Direct checks of ibmc_cm_step
 * ====================================================================== */

static int cm_equal(const ibmc_cm_t * a, const ibmc_cm_t * b)
{
    return a->state == b->state && a->remote_qpn == b->remote_qpn &&
        a->retry_at == b->retry_at && a->interval == b->interval &&
        a->deadline == b->deadline && a->retransmits == b->retransmits;
}

/* Steps and checks that the event was ignored as STALE without any change. */
static void expect_stale(ibmc_cm_t * cm, ibmc_cm_event_t ev, uint32_t qpn, double now,
                         const char *what)
{
    ibmc_cm_t before = *cm;
    unsigned act = ibmc_cm_step(cm, ev, qpn, now, &timing);
    if (act != IBMC_CM_ACT_STALE) {
        tap_diag("  %s: actions 0x%x, expected STALE (0x%x)", what, act,
                 (unsigned) IBMC_CM_ACT_STALE);
        TAP_FAIL("stale event not reported as STALE");
    }
    if (!cm_equal(cm, &before)) {
        tap_diag("  %s: state %s -> %s, remote_qpn 0x%x -> 0x%x", what,
                 ibmc_cm_state_name(before.state), ibmc_cm_state_name(cm->state),
                 before.remote_qpn, cm->remote_qpn);
        TAP_FAIL("stale event changed the connection");
    }
}

/* ======================================================================
 * The simulator
 * ====================================================================== */

enum { DG_REQ, DG_REP };
enum { RC_RTU, RC_DATA };

#define MAX_DG 8192
#define MAX_RC 1024
#define MAX_APP 8
#define MAX_STEPS 200000
#define HORIZON 1000.0

typedef struct {
    double at;
    unsigned long seq;
    int type;                   /* DG_REQ / DG_REP */
    int src, dst;
    uint32_t qpn;               /* the sender's RC QP number, as the message carries it */
} dgram_t;

typedef struct {
    double at;
    int kind;                   /* RC_RTU / RC_DATA */
} rcpkt_t;

typedef struct {
    double at;
    int ep;
    int done;
} appev_t;

typedef struct {
    const char *name;
    uint32_t qpn;               /* this side's RC QP number */
    ibmc_cm_t cm;
    /* what the caller did */
    int qp_created;
    uint32_t qp_dest;           /* 0 until CONNECT: the QP number our QP sends to */
    int connects, flushes;
    int app_sends, held, pending;
    int data_sent, data_recv, rtu_sent, rtu_recv;
    int failed;
    double fail_time;
    int stale;
    int reqs_sent, reps_sent;
    double req_time[128];
    int n_req_time;
    double timer_lag;           /* how late the progress engine notices the timer */
} ep_t;

typedef struct sim {
    int nep;                    /* 2, or 1 for a process connecting to itself */
    ep_t ep[2];
    double now;
    unsigned long seq;
    dgram_t dg[MAX_DG];
    int ndg;
    rcpkt_t rc[2][MAX_RC];      /* per receiving endpoint, FIFO */
    int rc_head[2], rc_tail[2];
    double rc_last[2];
    appev_t app[MAX_APP];
    int napp;
    /* behaviour of the network */
    int random;
    rng_t rng;
    double loss, dup, lat_min, lat_max, rc_lat;
    double spurious;            /* chance of a TIMER poll that is not due, after each event */
    int drop_all;
    int (*drop)(struct sim *, const dgram_t *);
    int drop_state[4];
    /* results */
    int violations;
    char violation[512];
    int dg_sent, dg_lost, dg_dups;
    int steps, hung, spurious_polls;
} sim_t;

static void violate(sim_t * s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void violate(sim_t * s, const char *fmt, ...)
{
    if (!s->violations++) {
        va_list ap;
        int n = snprintf(s->violation, sizeof(s->violation), "t=%.4f: ", s->now);
        va_start(ap, fmt);
        vsnprintf(s->violation + n, sizeof(s->violation) - (size_t) n, fmt, ap);
        va_end(ap);
    }
}

static int peer_of(const sim_t * s, int i)
{
    return s->nep == 1 ? i : 1 - i;
}

static void sim_init(sim_t * s, int nep)
{
    memset(s, 0, sizeof(*s));
    s->nep = nep;
    s->ep[0].name = "A";
    s->ep[0].qpn = QPN_A;
    s->ep[1].name = "B";
    s->ep[1].qpn = QPN_B;
    for (int i = 0; i < 2; i++)
        ibmc_cm_init(&s->ep[i].cm);
    s->lat_min = s->lat_max = 0.01;
    s->rc_lat = 0.005;
}

static void app_at(sim_t * s, int ep, double at)
{
    s->app[s->napp].at = at;
    s->app[s->napp].ep = ep;
    s->app[s->napp].done = 0;
    s->napp++;
}

static double dg_latency(sim_t * s)
{
    if (!s->random)
        return s->lat_min;
    return s->lat_min + rng_unit(&s->rng) * (s->lat_max - s->lat_min);
}

static void dg_enqueue(sim_t * s, const dgram_t * m)
{
    if (s->ndg == MAX_DG) {
        violate(s, "simulator: datagram queue overflow");
        return;
    }
    s->dg[s->ndg] = *m;
    s->dg[s->ndg].at = s->now + dg_latency(s);
    s->dg[s->ndg].seq = s->seq++;
    s->ndg++;
}

static void dg_send(sim_t * s, int i, int type)
{
    ep_t *e = &s->ep[i];
    dgram_t m = { 0, 0, type, i, peer_of(s, i), e->qpn };

    s->dg_sent++;
    if (type == DG_REQ) {
        e->reqs_sent++;
        if (e->n_req_time < (int) (sizeof(e->req_time) / sizeof(e->req_time[0])))
            e->req_time[e->n_req_time++] = s->now;
    } else {
        e->reps_sent++;
    }
    if (s->drop_all || (s->drop && s->drop(s, &m)) ||
        (s->random && rng_unit(&s->rng) < s->loss)) {
        s->dg_lost++;
        return;
    }
    dg_enqueue(s, &m);
    if (s->random && rng_unit(&s->rng) < s->dup) {
        s->dg_dups++;
        dg_enqueue(s, &m);
    }
}

/* Puts a packet on the RC connection, checking the protocol invariant. */
static void rc_send(sim_t * s, int i, int kind)
{
    ep_t *e = &s->ep[i];
    int p = peer_of(s, i);
    const char *what = kind == RC_RTU ? "an RTU" : "data";

    if (e->qp_dest != s->ep[p].qpn) {
        violate(s, "%s sends %s on RC but its QP is connected to 0x%x, not 0x%x", e->name, what,
                e->qp_dest, s->ep[p].qpn);
        return;
    }
    if (s->ep[p].qp_dest != e->qpn) {
        /* a real HCA drops this packet: the peer's QP is not ready for us */
        violate(s, "%s sends %s on RC before %s connected its QP to 0x%x (%s: %s, QP dest 0x%x)",
                e->name, what, s->ep[p].name, e->qpn, s->ep[p].name,
                ibmc_cm_state_name(s->ep[p].cm.state), s->ep[p].qp_dest);
        return;
    }
    if (s->rc_tail[p] == MAX_RC) {
        violate(s, "simulator: RC queue overflow");
        return;
    }
    double at = s->now + s->rc_lat;
    if (at < s->rc_last[p])
        at = s->rc_last[p];     /* in order */
    s->rc_last[p] = at;
    s->rc[p][s->rc_tail[p]].at = at;
    s->rc[p][s->rc_tail[p]].kind = kind;
    s->rc_tail[p]++;
    if (kind == RC_RTU)
        e->rtu_sent++;
    else
        e->data_sent++;
}

static void send_pending(sim_t * s, int i)
{
    while (s->ep[i].pending > 0) {
        s->ep[i].pending--;
        rc_send(s, i, RC_DATA);
    }
}

/* Performs the actions the way a caller must, in the documented order. */
static void perform(sim_t * s, int i, unsigned act, ibmc_cm_state_t before, double deadline)
{
    ep_t *e = &s->ep[i];

    if (act & IBMC_CM_ACT_STALE) {
        e->stale++;
        if (act != IBMC_CM_ACT_STALE)
            violate(s, "%s: STALE together with other actions 0x%x", e->name, act);
    }
    if (act & IBMC_CM_ACT_CREATE_QP) {
        if (e->qp_created)
            violate(s, "%s: CREATE_QP a second time", e->name);
        e->qp_created++;
    }
    if (act & IBMC_CM_ACT_CONNECT) {
        if (!e->qp_created)
            violate(s, "%s: CONNECT without a QP", e->name);
        if (e->connects)
            violate(s, "%s: CONNECT a second time (to 0x%x, first to 0x%x)", e->name,
                    e->cm.remote_qpn, e->qp_dest);
        e->connects++;
        e->qp_dest = e->cm.remote_qpn;
    }
    if (act & IBMC_CM_ACT_SEND_REQ) {
        if (!e->qp_created)
            violate(s, "%s: REQ without a QP", e->name);
        dg_send(s, i, DG_REQ);
    }
    if (act & IBMC_CM_ACT_SEND_REP) {
        if (!e->qp_dest)
            violate(s, "%s: REP before its QP was connected", e->name);
        dg_send(s, i, DG_REP);
    }
    if (act & IBMC_CM_ACT_SEND_RTU)
        rc_send(s, i, RC_RTU);
    if (act & IBMC_CM_ACT_FLUSH) {
        if (++e->flushes > 1)
            violate(s, "%s: FLUSH a second time", e->name);
        if (e->cm.state != IBMC_CM_CONNECTED)
            violate(s, "%s: FLUSH in state %s", e->name, ibmc_cm_state_name(e->cm.state));
        send_pending(s, i);
    }
    if (act & IBMC_CM_ACT_FAIL) {
        if (s->now < deadline)
            violate(s, "%s: FAIL at %.4f before the deadline %.4f", e->name, s->now, deadline);
        if (e->cm.state != IBMC_CM_FAILED)
            violate(s, "%s: FAIL but state %s", e->name, ibmc_cm_state_name(e->cm.state));
        e->failed = 1;
        e->fail_time = s->now;
    }
    if (before != IBMC_CM_CONNECTED && e->cm.state == IBMC_CM_CONNECTED &&
        !(act & IBMC_CM_ACT_FLUSH))
        violate(s, "%s: became CONNECTED without FLUSH (actions 0x%x)", e->name, act);
    if (e->cm.state == IBMC_CM_CONNECTED && e->connects != 1)
        violate(s, "%s: CONNECTED after %d CONNECTs", e->name, e->connects);
}

static unsigned sim_step(sim_t * s, int i, ibmc_cm_event_t ev, uint32_t qpn)
{
    ep_t *e = &s->ep[i];
    ibmc_cm_state_t before = e->cm.state;
    double deadline = e->cm.deadline;
    unsigned act = ibmc_cm_step(&e->cm, ev, qpn, s->now, &timing);
    perform(s, i, act, before, deadline);
    return act;
}

static void app_send(sim_t * s, int i)
{
    ep_t *e = &s->ep[i];
    e->app_sends++;
    e->pending++;
    if (e->cm.state == IBMC_CM_CONNECTED) {
        send_pending(s, i);
    } else {
        e->held++;
        sim_step(s, i, IBMC_CM_EV_WANT_SEND, 0);
    }
}

static void rc_deliver(sim_t * s, int p)
{
    rcpkt_t pkt = s->rc[p][s->rc_head[p]++];
    sim_step(s, p, IBMC_CM_EV_RECV_RC, 0);
    if (pkt.kind == RC_RTU)
        s->ep[p].rtu_recv++;
    else
        s->ep[p].data_recv++;
}

/* A progress-engine poll that is not due must change nothing. */
static void spurious_poll(sim_t * s)
{
    int i = (int) rng_below(&s->rng, (uint64_t) s->nep);
    ep_t *e = &s->ep[i];
    if (ibmc_cm_has_timer(&e->cm) && s->now >= e->cm.retry_at)
        return;                 /* due: the ordinary timer event handles it */
    ibmc_cm_t before = e->cm;
    unsigned act = ibmc_cm_step(&e->cm, IBMC_CM_EV_TIMER, 0, s->now, &timing);
    s->spurious_polls++;
    if (act || !cm_equal(&before, &e->cm)) {
        violate(s, "%s: TIMER poll at %.4f in %s (retry_at %.4f) returned 0x%x", e->name,
                s->now, ibmc_cm_state_name(before.state), before.retry_at, act);
        perform(s, i, act, before.state, before.deadline);
    }
}

static void sim_run(sim_t * s)
{
    for (;;) {
        double best = NEVER;
        int kind = -1, idx = -1;
        unsigned long best_seq = 0;

        for (int k = 0; k < s->napp; k++)
            if (!s->app[k].done && s->app[k].at < best) {
                best = s->app[k].at;
                kind = 0;
                idx = k;
            }
        for (int k = 0; k < s->ndg; k++)
            if (s->dg[k].at < best || (kind == 1 && s->dg[k].at == best && s->dg[k].seq < best_seq)) {
                best = s->dg[k].at;
                best_seq = s->dg[k].seq;
                kind = 1;
                idx = k;
            }
        for (int p = 0; p < s->nep; p++)
            if (s->rc_head[p] < s->rc_tail[p] && s->rc[p][s->rc_head[p]].at < best) {
                best = s->rc[p][s->rc_head[p]].at;
                kind = 2;
                idx = p;
            }
        for (int i = 0; i < s->nep; i++)
            if (ibmc_cm_has_timer(&s->ep[i].cm) &&
                s->ep[i].cm.retry_at + s->ep[i].timer_lag < best) {
                best = s->ep[i].cm.retry_at + s->ep[i].timer_lag;
                kind = 3;
                idx = i;
            }
        if (kind < 0)
            break;
        if (best > HORIZON || ++s->steps > MAX_STEPS) {
            s->hung = 1;
            break;
        }
        if (best > s->now)
            s->now = best;

        switch (kind) {
            case 0:
                s->app[idx].done = 1;
                app_send(s, s->app[idx].ep);
                break;
            case 1:{
                    dgram_t m = s->dg[idx];
                    s->dg[idx] = s->dg[--s->ndg];
                    sim_step(s, m.dst, m.type == DG_REQ ? IBMC_CM_EV_RECV_REQ :
                             IBMC_CM_EV_RECV_REP, m.qpn);
                    break;
                }
            case 2:
                rc_deliver(s, idx);
                break;
            case 3:{
                    ep_t *e = &s->ep[idx];
                    unsigned act = sim_step(s, idx, IBMC_CM_EV_TIMER, 0);
                    if (ibmc_cm_has_timer(&e->cm) && !(act & (IBMC_CM_ACT_SEND_REQ |
                                                             IBMC_CM_ACT_SEND_REP))) {
                        violate(s, "%s: due TIMER in %s did nothing", e->name,
                                ibmc_cm_state_name(e->cm.state));
                        s->hung = 1;
                        return;
                    }
                    if (s->random)
                        e->timer_lag = rng_unit(&s->rng) * 0.02;
                    break;
                }
        }
        if (s->random && s->spurious > 0 && rng_unit(&s->rng) < s->spurious)
            spurious_poll(s);
    }
}

/* Checks that the two sides (or the one) ended connected to each other, with
 * everything delivered.  Returns 0 or the number of problems found. */
static int check_connected(const sim_t * s, int quiet)
{
    int bad = 0;
    for (int i = 0; i < s->nep; i++) {
        const ep_t *e = &s->ep[i];
        const ep_t *p = &s->ep[peer_of(s, i)];
        const char *why = NULL;
        if (e->cm.state != IBMC_CM_CONNECTED)
            why = "not CONNECTED";
        else if (e->cm.remote_qpn != p->qpn)
            why = "remote_qpn is not the peer's qpn";
        else if (e->qp_dest != p->qpn)
            why = "QP connected to the wrong qpn";
        else if (e->connects != 1)
            why = "CONNECT not exactly once";
        else if (e->flushes != 1)
            why = "FLUSH not exactly once";
        else if (e->pending != 0)
            why = "messages still queued";
        else if (p->data_recv != e->app_sends)
            why = "peer did not receive every message";
        if (why) {
            bad++;
            if (!quiet)
                tap_diag("  %s: %s (state %s, remote_qpn 0x%x, connects %d, flushes %d, "
                         "sent %d, peer received %d)", e->name, why,
                         ibmc_cm_state_name(e->cm.state), e->cm.remote_qpn, e->connects,
                         e->flushes, e->app_sends, p->data_recv);
        }
    }
    if (s->violations) {
        bad++;
        if (!quiet)
            tap_diag("  %d violation(s), first: %s", s->violations, s->violation);
    }
    if (s->hung) {
        bad++;
        if (!quiet)
            tap_diag("  the simulation did not settle (t=%.3f, %d steps)", s->now, s->steps);
    }
    return bad;
}

/* ---- deterministic loss patterns ---- */

static int drop_first_rep(sim_t * s, const dgram_t * m)
{
    return m->type == DG_REP && s->drop_state[0]++ == 0;
}

static int drop_first_req(sim_t * s, const dgram_t * m)
{
    return m->type == DG_REQ && s->drop_state[0]++ == 0;
}

static int drop_first_rep_of_each(sim_t * s, const dgram_t * m)
{
    return m->type == DG_REP && s->drop_state[m->src]++ == 0;
}

static int drop_all_but_first(sim_t * s, const dgram_t * m)
{
    (void) m;
    return s->drop_state[0]++ > 0;
}

/* ======================================================================
 * The randomized property test
 * ====================================================================== */

typedef struct {
    int runs, connected, deadline, spurious_polls;
    int bad_invariant, bad_connect_once, bad_connected, bad_stale, bad_hung;
    long dg_lost, dg_dups, retransmits;
    int first_bad_seed[5];
    int n_bad;
} prop_t;

static void prop_bad(prop_t * pr, int *counter, uint64_t seed, const sim_t * s, const char *what)
{
    (*counter)++;
    if (pr->n_bad < 5) {
        pr->first_bad_seed[pr->n_bad++] = (int) seed;
        tap_diag("  seed %llu: %s (loss %.2f dup %.2f lat %.3f..%.3f)", (unsigned long long) seed,
                 what, s->loss, s->dup, s->lat_min, s->lat_max);
        if (s->violations)
            tap_diag("    first violation: %s", s->violation);
        for (int i = 0; i < s->nep; i++)
            tap_diag("    %s: %s remote_qpn 0x%x connects %d flushes %d app %d, peer got %d, "
                     "stale %d, retransmits %u", s->ep[i].name,
                     ibmc_cm_state_name(s->ep[i].cm.state), s->ep[i].cm.remote_qpn,
                     s->ep[i].connects, s->ep[i].flushes, s->ep[i].app_sends,
                     s->ep[peer_of(s, i)].data_recv, s->ep[i].stale, s->ep[i].cm.retransmits);
    }
}

static void random_run(sim_t * s, int nep, uint64_t seed, prop_t * pr)
{
    sim_init(s, nep);
    s->random = 1;
    rng_seed(&s->rng, seed);
    s->loss = rng_unit(&s->rng) * 0.5;
    s->dup = rng_unit(&s->rng) * 0.3;
    s->lat_min = 0.0005;
    /* up to ten times first_retry: retransmissions overtake earlier copies */
    s->lat_max = s->lat_min + rng_unit(&s->rng) * 0.5;
    s->rc_lat = 0.0005 + rng_unit(&s->rng) * 0.01;
    s->spurious = 0.2;
    for (int i = 0; i < nep; i++)
        s->ep[i].timer_lag = rng_unit(&s->rng) * 0.02;

    if (nep == 1) {
        app_at(s, 0, rng_unit(&s->rng) * 0.1);
        if (rng_below(&s->rng, 2))
            app_at(s, 0, rng_unit(&s->rng) * 2.0);
    } else {
        int mode = (int) rng_below(&s->rng, 4);
        if (mode == 0 || mode == 1) {   /* one side starts, the other may send later */
            double t0 = rng_unit(&s->rng) * 0.1;
            app_at(s, mode, t0);
            if (rng_below(&s->rng, 2))
                app_at(s, 1 - mode, t0 + rng_unit(&s->rng) * 2.0);
        } else if (mode == 2) {         /* both before anything is delivered */
            app_at(s, 0, 0.0);
            app_at(s, 1, 0.0);
        } else {                        /* both, at unrelated times */
            app_at(s, 0, rng_unit(&s->rng) * 0.3);
            app_at(s, 1, rng_unit(&s->rng) * 0.3);
        }
        for (int k = (int) rng_below(&s->rng, 3); k > 0; k--)
            app_at(s, (int) rng_below(&s->rng, 2), rng_unit(&s->rng) * 3.0);
    }

    sim_run(s);

    pr->runs++;
    pr->dg_lost += s->dg_lost;
    pr->dg_dups += s->dg_dups;
    pr->spurious_polls += s->spurious_polls;
    for (int i = 0; i < nep; i++)
        pr->retransmits += s->ep[i].cm.retransmits;

    int hit_deadline = 0;
    for (int i = 0; i < nep; i++)
        hit_deadline |= s->ep[i].failed;
    if (hit_deadline)
        pr->deadline++;

    if (s->violations)
        prop_bad(pr, &pr->bad_invariant, seed, s, "a protocol violation");
    for (int i = 0; i < nep; i++)
        if (s->ep[i].connects > 1) {
            prop_bad(pr, &pr->bad_connect_once, seed, s, "CONNECT more than once");
            break;
        }
    for (int i = 0; i < nep; i++)
        if (s->ep[i].stale) {
            /* one incarnation of each QP: nothing can legitimately be stale */
            prop_bad(pr, &pr->bad_stale, seed, s, "a message was judged STALE");
            break;
        }
    if (s->hung)
        prop_bad(pr, &pr->bad_hung, seed, s, "the simulation did not settle");
    if (!hit_deadline) {
        if (check_connected(s, 1))
            prop_bad(pr, &pr->bad_connected, seed, s, "not connected to each other");
        else
            pr->connected++;
    }
}

static void report_prop(const prop_t * pr, const char *what)
{
    tap_diag("  %s: %d runs, %d connected, %d hit the deadline, %ld datagrams lost, "
             "%ld duplicated, %ld retransmissions, %d spurious polls", what, pr->runs,
             pr->connected, pr->deadline, pr->dg_lost, pr->dg_dups, pr->retransmits,
             pr->spurious_polls);
}

/* ====================================================================== */

int main(void)
{
    static sim_t sim;           /* large: keep it off the stack */
    sim_t *s = &sim;

    /* ---------------- direct steps ---------------- */

    TAP_TEST("step: initiator/acceptor, exact actions") {
        ibmc_cm_t a, b;
        ibmc_cm_init(&a);
        ibmc_cm_init(&b);
        TAP_EXPECT(a.state == IBMC_CM_IDLE && !ibmc_cm_has_timer(&a));
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_WANT_SEND, 0, 10.0, &timing),
                      IBMC_CM_ACT_CREATE_QP | IBMC_CM_ACT_SEND_REQ);
        TAP_EXPECT(a.state == IBMC_CM_REQ_SENT && ibmc_cm_has_timer(&a));
        TAP_EXPECT(a.retry_at == 10.0 + 0.05 && a.deadline == 10.0 + 120.0);
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_WANT_SEND, 0, 10.001, &timing), 0);
        TAP_EXPECT_EQ(ibmc_cm_step(&b, IBMC_CM_EV_RECV_REQ, QPN_A, 10.01, &timing),
                      IBMC_CM_ACT_CREATE_QP | IBMC_CM_ACT_CONNECT | IBMC_CM_ACT_SEND_REP);
        TAP_EXPECT(b.state == IBMC_CM_REP_SENT && ibmc_cm_has_timer(&b));
        TAP_EXPECT_EQ(b.remote_qpn, QPN_A);
        TAP_EXPECT_EQ(ibmc_cm_step(&b, IBMC_CM_EV_WANT_SEND, 0, 10.011, &timing), 0);
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_RECV_REP, QPN_B, 10.02, &timing),
                      IBMC_CM_ACT_CONNECT | IBMC_CM_ACT_SEND_RTU | IBMC_CM_ACT_FLUSH);
        TAP_EXPECT(a.state == IBMC_CM_CONNECTED && !ibmc_cm_has_timer(&a));
        TAP_EXPECT_EQ(a.remote_qpn, QPN_B);
        TAP_EXPECT_EQ(ibmc_cm_step(&b, IBMC_CM_EV_RECV_RC, 0, 10.03, &timing),
                      IBMC_CM_ACT_FLUSH);
        TAP_EXPECT(b.state == IBMC_CM_CONNECTED && !ibmc_cm_has_timer(&b));
        /* late duplicates */
        TAP_EXPECT_EQ(ibmc_cm_step(&b, IBMC_CM_EV_RECV_REQ, QPN_A, 10.04, &timing),
                      IBMC_CM_ACT_SEND_REP);
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_RECV_REP, QPN_B, 10.05, &timing), 0);
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_RECV_RC, 0, 10.05, &timing), 0);
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_TIMER, 0, 1000.0, &timing), 0);
        TAP_EXPECT(a.state == IBMC_CM_CONNECTED && b.state == IBMC_CM_CONNECTED);
        TAP_EXPECT(a.retransmits == 0 && b.retransmits == 0);
    }

    TAP_TEST("step: simultaneous connect, exact actions") {
        ibmc_cm_t a, b;
        ibmc_cm_init(&a);
        ibmc_cm_init(&b);
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_WANT_SEND, 0, 0, &timing),
                      IBMC_CM_ACT_CREATE_QP | IBMC_CM_ACT_SEND_REQ);
        TAP_EXPECT_EQ(ibmc_cm_step(&b, IBMC_CM_EV_WANT_SEND, 0, 0, &timing),
                      IBMC_CM_ACT_CREATE_QP | IBMC_CM_ACT_SEND_REQ);
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_RECV_REQ, QPN_B, 0.01, &timing),
                      IBMC_CM_ACT_CONNECT | IBMC_CM_ACT_SEND_REP);
        TAP_EXPECT_EQ(ibmc_cm_step(&b, IBMC_CM_EV_RECV_REQ, QPN_A, 0.01, &timing),
                      IBMC_CM_ACT_CONNECT | IBMC_CM_ACT_SEND_REP);
        TAP_EXPECT(a.state == IBMC_CM_REP_SENT && b.state == IBMC_CM_REP_SENT);
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_RECV_REP, QPN_B, 0.02, &timing),
                      IBMC_CM_ACT_SEND_RTU | IBMC_CM_ACT_FLUSH);
        TAP_EXPECT_EQ(ibmc_cm_step(&b, IBMC_CM_EV_RECV_REP, QPN_A, 0.02, &timing),
                      IBMC_CM_ACT_SEND_RTU | IBMC_CM_ACT_FLUSH);
        TAP_EXPECT(a.state == IBMC_CM_CONNECTED && b.state == IBMC_CM_CONNECTED);
        TAP_EXPECT(a.remote_qpn == QPN_B && b.remote_qpn == QPN_A);
        /* each RTU arrives at a side that is already connected */
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_RECV_RC, 0, 0.03, &timing), 0);
        TAP_EXPECT_EQ(ibmc_cm_step(&b, IBMC_CM_EV_RECV_RC, 0, 0.03, &timing), 0);
    }

    TAP_TEST("step: a late simultaneous REQ does not extend the deadline") {
        ibmc_cm_t a;
        ibmc_cm_init(&a);
        ibmc_cm_step(&a, IBMC_CM_EV_WANT_SEND, 0, 0, &timing);
        /* the peer's own REQ arrives long after ours went out */
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_RECV_REQ, QPN_B, 100.0, &timing),
                      IBMC_CM_ACT_CONNECT | IBMC_CM_ACT_SEND_REP);
        TAP_EXPECT(a.state == IBMC_CM_REP_SENT && a.deadline == 120.0);
        TAP_EXPECT(a.retry_at == 100.0 + 0.05);
        /* no REP ever comes: failure at the original deadline, not at 220 s */
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_TIMER, 0, 119.9, &timing),
                      IBMC_CM_ACT_SEND_REP);
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_TIMER, 0, 121.0, &timing), IBMC_CM_ACT_FAIL);
        TAP_EXPECT(a.state == IBMC_CM_FAILED);
    }

    TAP_TEST("step: self connect, exact actions") {
        ibmc_cm_t a;
        ibmc_cm_init(&a);
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_WANT_SEND, 0, 0, &timing),
                      IBMC_CM_ACT_CREATE_QP | IBMC_CM_ACT_SEND_REQ);
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_RECV_REQ, QPN_A, 0.01, &timing),
                      IBMC_CM_ACT_CONNECT | IBMC_CM_ACT_SEND_REP);
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_RECV_REP, QPN_A, 0.02, &timing),
                      IBMC_CM_ACT_SEND_RTU | IBMC_CM_ACT_FLUSH);
        TAP_EXPECT(a.state == IBMC_CM_CONNECTED && a.remote_qpn == QPN_A);
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_RECV_RC, 0, 0.03, &timing), 0);
    }

    TAP_TEST("step: TIMER before retry_at does nothing; backoff doubles up to max_retry") {
        ibmc_cm_t a, before;
        double expect_iv = 0.05, t = 0;
        ibmc_cm_init(&a);
        ibmc_cm_step(&a, IBMC_CM_EV_WANT_SEND, 0, 0, &timing);
        before = a;
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_TIMER, 0, 0.049, &timing), 0);
        TAP_EXPECT(cm_equal(&a, &before));
        for (int k = 1; k <= 10; k++) {
            t = a.retry_at;
            TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_TIMER, 0, t, &timing), IBMC_CM_ACT_SEND_REQ);
            expect_iv = expect_iv * 2 < 2.0 ? expect_iv * 2 : 2.0;
            TAP_EXPECT(a.interval == expect_iv);
            TAP_EXPECT(a.retry_at == t + expect_iv);
            TAP_EXPECT_EQ(a.retransmits, k);
        }
        TAP_EXPECT(a.interval == 2.0);
        TAP_EXPECT(a.deadline == 120.0);      /* retransmission does not move it */
    }

    TAP_TEST("step: FAIL exactly when a due TIMER is at or past the deadline") {
        ibmc_cm_t a;
        ibmc_cm_init(&a);
        ibmc_cm_step(&a, IBMC_CM_EV_WANT_SEND, 0, 5.0, &timing);        /* deadline 125 */
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_TIMER, 0, 124.99, &timing),
                      IBMC_CM_ACT_SEND_REQ);
        TAP_EXPECT(a.state == IBMC_CM_REQ_SENT);
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_TIMER, 0, a.retry_at, &timing),
                      IBMC_CM_ACT_FAIL);
        TAP_EXPECT(a.state == IBMC_CM_FAILED && !ibmc_cm_has_timer(&a));
        /* nothing revives a failed connection */
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_RECV_REP, QPN_B, 126, &timing), 0);
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_RECV_REQ, QPN_B, 126, &timing), 0);
        TAP_EXPECT_EQ(ibmc_cm_step(&a, IBMC_CM_EV_WANT_SEND, 0, 126, &timing), 0);
        TAP_EXPECT(a.state == IBMC_CM_FAILED);

        /* the acceptor side as well */
        ibmc_cm_t b;
        ibmc_cm_init(&b);
        ibmc_cm_step(&b, IBMC_CM_EV_RECV_REQ, QPN_A, 0.0, &timing);
        TAP_EXPECT_EQ(ibmc_cm_step(&b, IBMC_CM_EV_TIMER, 0, 119.999, &timing),
                      IBMC_CM_ACT_SEND_REP);
        /* the last wait ends at the deadline, not a backoff interval past it */
        TAP_EXPECT(b.retry_at == 120.0);
        TAP_EXPECT_EQ(ibmc_cm_step(&b, IBMC_CM_EV_TIMER, 0, 119.9995, &timing), 0);
        TAP_EXPECT_EQ(ibmc_cm_step(&b, IBMC_CM_EV_TIMER, 0, b.retry_at, &timing),
                      IBMC_CM_ACT_FAIL);
        TAP_EXPECT(b.state == IBMC_CM_FAILED);
    }

    TAP_TEST("step: with an infinite timeout (MPI_Finalize's barrier) a REQ never fails") {
        const ibmc_cm_timing_t forever = { 0.05, 2.0, HUGE_VAL };
        ibmc_cm_t a;
        ibmc_cm_init(&a);
        TAP_EXPECT(ibmc_cm_step(&a, IBMC_CM_EV_WANT_SEND, 0, 5.0, &forever) &
                   IBMC_CM_ACT_SEND_REQ);
        int fails = 0;
        for (int k = 0; k < 2000; k++)      /* over an hour of retransmissions */
            fails += ibmc_cm_step(&a, IBMC_CM_EV_TIMER, 0, a.retry_at, &forever) !=
                IBMC_CM_ACT_SEND_REQ;
        TAP_EXPECT_EQ(fails, 0);
        TAP_EXPECT(a.state == IBMC_CM_REQ_SENT && a.retry_at > 3600.0);
        TAP_EXPECT(a.interval == 2.0);
        /* and it still connects when the peer answers at last */
        TAP_EXPECT(ibmc_cm_step(&a, IBMC_CM_EV_RECV_REP, QPN_B, a.retry_at, &forever) &
                   IBMC_CM_ACT_CONNECT);
    }

    TAP_TEST("stale: REP in IDLE, REQ with another qpn in REP_SENT, and friends") {
        ibmc_cm_t c;
        ibmc_cm_init(&c);
        expect_stale(&c, IBMC_CM_EV_RECV_REP, QPN_B, 1.0, "REP in IDLE");
        expect_stale(&c, IBMC_CM_EV_RECV_RC, 0, 1.0, "RC packet in IDLE");
        TAP_EXPECT(c.state == IBMC_CM_IDLE);

        ibmc_cm_init(&c);
        TAP_EXPECT_EQ(ibmc_cm_step(&c, IBMC_CM_EV_RECV_REQ, QPN_B, 1.0, &timing),
                      IBMC_CM_ACT_CREATE_QP | IBMC_CM_ACT_CONNECT | IBMC_CM_ACT_SEND_REP);
        expect_stale(&c, IBMC_CM_EV_RECV_REQ, 0x300, 1.1, "REQ with another qpn in REP_SENT");
        expect_stale(&c, IBMC_CM_EV_RECV_REP, 0x300, 1.1, "REP with another qpn in REP_SENT");
        TAP_EXPECT(c.state == IBMC_CM_REP_SENT && c.remote_qpn == QPN_B);

        ibmc_cm_init(&c);
        ibmc_cm_step(&c, IBMC_CM_EV_WANT_SEND, 0, 1.0, &timing);
        expect_stale(&c, IBMC_CM_EV_RECV_RC, 0, 1.1, "RC packet in REQ_SENT");

        TAP_EXPECT_EQ(ibmc_cm_step(&c, IBMC_CM_EV_RECV_REP, QPN_B, 1.2, &timing),
                      IBMC_CM_ACT_CONNECT | IBMC_CM_ACT_SEND_RTU | IBMC_CM_ACT_FLUSH);
        expect_stale(&c, IBMC_CM_EV_RECV_REQ, 0x300, 1.3, "REQ with another qpn in CONNECTED");
        expect_stale(&c, IBMC_CM_EV_RECV_REP, 0x300, 1.3, "REP with another qpn in CONNECTED");
        TAP_EXPECT(c.state == IBMC_CM_CONNECTED && c.remote_qpn == QPN_B);
    }

    /* ---------------- simulated scenarios ---------------- */

    TAP_TEST("sim: normal initiator (A) / acceptor (B)") {
        sim_init(s, 2);
        app_at(s, 0, 0.0);
        app_at(s, 1, 0.015);    /* B wants to send while in REP_SENT: held */
        app_at(s, 1, 1.0);      /* and again once connected */
        app_at(s, 0, 1.0);
        sim_run(s);
        TAP_EXPECT(check_connected(s, 0) == 0);
        TAP_EXPECT_EQ(s->ep[0].cm.remote_qpn, QPN_B);
        TAP_EXPECT_EQ(s->ep[1].cm.remote_qpn, QPN_A);
        TAP_EXPECT_EQ(s->dg_sent, 2);   /* one REQ, one REP */
        TAP_EXPECT(s->ep[0].reqs_sent == 1 && s->ep[1].reps_sent == 1);
        TAP_EXPECT(s->ep[0].rtu_sent == 1 && s->ep[1].rtu_recv == 1 && s->ep[1].rtu_sent == 0);
        TAP_EXPECT_EQ(s->ep[1].held, 1);
        TAP_EXPECT_EQ(s->ep[0].data_recv, 2);
        TAP_EXPECT_EQ(s->ep[1].data_recv, 2);
        TAP_EXPECT(s->ep[0].cm.retransmits == 0 && s->ep[1].cm.retransmits == 0);
        TAP_EXPECT(s->ep[0].stale == 0 && s->ep[1].stale == 0);
    }

    TAP_TEST("sim: simultaneous connect (both WANT_SEND before any delivery)") {
        sim_init(s, 2);
        app_at(s, 0, 0.0);
        app_at(s, 1, 0.0);
        sim_run(s);
        TAP_EXPECT(check_connected(s, 0) == 0);
        TAP_EXPECT(s->ep[0].reqs_sent == 1 && s->ep[1].reqs_sent == 1);
        TAP_EXPECT(s->ep[0].reps_sent >= 1 && s->ep[1].reps_sent >= 1);
        TAP_EXPECT(s->ep[0].cm.retransmits == 0 && s->ep[1].cm.retransmits == 0);
        TAP_EXPECT(s->ep[0].stale == 0 && s->ep[1].stale == 0);
    }

    TAP_TEST("sim: simultaneous connect with skewed latencies") {
        /* B's REQ is still in flight when A's REP reaches B */
        sim_init(s, 2);
        app_at(s, 0, 0.0);
        app_at(s, 1, 0.009);
        sim_run(s);
        TAP_EXPECT(check_connected(s, 0) == 0);
        TAP_EXPECT(s->ep[0].stale == 0 && s->ep[1].stale == 0);
    }

    TAP_TEST("sim: first REQ lost, recovered by retransmission") {
        sim_init(s, 2);
        s->drop = drop_first_req;
        app_at(s, 0, 0.0);
        sim_run(s);
        TAP_EXPECT(check_connected(s, 0) == 0);
        TAP_EXPECT_EQ(s->dg_lost, 1);
        TAP_EXPECT(s->ep[0].cm.retransmits > 0);
    }

    TAP_TEST("sim: first REP lost, recovered by retransmission") {
        sim_init(s, 2);
        s->drop = drop_first_rep;
        app_at(s, 0, 0.0);
        sim_run(s);
        TAP_EXPECT(check_connected(s, 0) == 0);
        TAP_EXPECT_EQ(s->dg_lost, 1);
        TAP_EXPECT(s->ep[0].cm.retransmits + s->ep[1].cm.retransmits > 0);
        TAP_EXPECT(s->ep[1].reps_sent >= 2);
    }

    TAP_TEST("sim: simultaneous connect with both REPs lost") {
        sim_init(s, 2);
        s->drop = drop_first_rep_of_each;
        app_at(s, 0, 0.0);
        app_at(s, 1, 0.0);
        sim_run(s);
        TAP_EXPECT(check_connected(s, 0) == 0);
        TAP_EXPECT_EQ(s->dg_lost, 2);
        TAP_EXPECT(s->ep[0].cm.retransmits + s->ep[1].cm.retransmits > 0);
    }

    TAP_TEST("sim: all datagrams lost -> FAIL after the timeout, not before") {
        sim_init(s, 2);
        s->drop_all = 1;
        app_at(s, 0, 0.0);
        sim_run(s);
        ep_t *a = &s->ep[0];
        TAP_EXPECT(!s->hung);
        TAP_EXPECT(s->violations == 0);
        if (s->violations)
            tap_diag("  %s", s->violation);
        TAP_EXPECT(a->failed);
        TAP_EXPECT(a->cm.state == IBMC_CM_FAILED);
        TAP_EXPECT(!ibmc_cm_has_timer(&a->cm));
        TAP_EXPECT(a->fail_time >= 120.0);
        TAP_EXPECT(a->fail_time <= 120.0 + timing.max_retry + 1e-9);
        TAP_EXPECT(a->connects == 0 && a->flushes == 0 && a->data_sent == 0);
        TAP_EXPECT_EQ(a->cm.retransmits, (unsigned) (a->reqs_sent - 1));
        TAP_EXPECT(a->reqs_sent > 50);  /* 0.05, 0.1, ... then every 2 s for 2 minutes */
        TAP_EXPECT(s->ep[1].cm.state == IBMC_CM_IDLE && !s->ep[1].qp_created);
        /* the gaps between REQs: first_retry, doubling, capped at max_retry */
        double iv = timing.first_retry;
        int gaps_ok = 1;
        for (int k = 1; k < a->n_req_time; k++) {
            double gap = a->req_time[k] - a->req_time[k - 1];
            if (gap < iv - 1e-9 || gap > iv + 1e-9) {
                tap_diag("  REQ gap %d is %.6f, expected %.6f", k, gap, iv);
                gaps_ok = 0;
                break;
            }
            iv = iv * 2 < timing.max_retry ? iv * 2 : timing.max_retry;
        }
        TAP_EXPECT(gaps_ok);
        TAP_EXPECT(a->req_time[a->n_req_time - 1] < 120.0);
    }

    TAP_TEST("sim: everything after the first REQ lost -> both sides FAIL") {
        sim_init(s, 2);
        s->drop = drop_all_but_first;
        app_at(s, 0, 0.0);
        sim_run(s);
        TAP_EXPECT(!s->hung && s->violations == 0);
        TAP_EXPECT(s->ep[0].failed && s->ep[0].cm.state == IBMC_CM_FAILED);
        TAP_EXPECT(s->ep[1].failed && s->ep[1].cm.state == IBMC_CM_FAILED);
        TAP_EXPECT(s->ep[0].fail_time >= 120.0);
        TAP_EXPECT(s->ep[1].fail_time >= 0.01 + 120.0);
        TAP_EXPECT(s->ep[1].cm.retransmits > 0);
    }

    TAP_TEST("sim: a process connecting to itself") {
        sim_init(s, 1);
        app_at(s, 0, 0.0);
        app_at(s, 0, 0.005);
        app_at(s, 0, 1.0);
        sim_run(s);
        TAP_EXPECT(check_connected(s, 0) == 0);
        TAP_EXPECT_EQ(s->ep[0].cm.remote_qpn, QPN_A);
        TAP_EXPECT_EQ(s->ep[0].qp_dest, QPN_A);
        TAP_EXPECT_EQ(s->ep[0].connects, 1);
        TAP_EXPECT(s->ep[0].rtu_sent == 1 && s->ep[0].rtu_recv == 1);
        TAP_EXPECT_EQ(s->ep[0].data_recv, 3);
        TAP_EXPECT(s->ep[0].cm.retransmits == 0 && s->ep[0].stale == 0);
    }

    TAP_TEST("sim: a process connecting to itself, first REP lost") {
        sim_init(s, 1);
        s->drop = drop_first_rep;
        app_at(s, 0, 0.0);
        sim_run(s);
        TAP_EXPECT(check_connected(s, 0) == 0);
        TAP_EXPECT(s->ep[0].cm.retransmits > 0);
        TAP_EXPECT_EQ(s->ep[0].cm.remote_qpn, QPN_A);
    }

    /* ---------------- randomized properties ---------------- */

    {
        prop_t pr;
        memset(&pr, 0, sizeof(pr));
        for (uint64_t seed = 1; seed <= 3000; seed++)
            random_run(s, 2, seed, &pr);
        report_prop(&pr, "two processes");

        tap_ok(pr.runs >= 2000 && pr.bad_invariant == 0,
               "random (3000 seeds): no RC packet before the peer connected, no protocol violation");
        tap_ok(pr.bad_connect_once == 0, "random: CONNECT at most once per side");
        tap_ok(pr.bad_connected == 0,
               "random: both sides CONNECTED to each other's qpn, all data delivered");
        tap_ok(pr.bad_stale == 0, "random: no message judged STALE");
        tap_ok(pr.bad_hung == 0, "random: every run settles (connected or failed)");
        tap_ok(pr.deadline * 100 <= pr.runs && pr.connected + pr.deadline == pr.runs &&
               pr.retransmits > 0 && pr.dg_lost > 0 && pr.dg_dups > 0 && pr.spurious_polls > 0,
               "random: the runs exercised loss, duplication and retries, and almost all connected");
    }

    {
        prop_t pr;
        memset(&pr, 0, sizeof(pr));
        for (uint64_t seed = 100001; seed <= 100500; seed++)
            random_run(s, 1, seed, &pr);
        report_prop(&pr, "self connect");
        tap_ok(pr.bad_invariant == 0 && pr.bad_connect_once == 0 && pr.bad_connected == 0 &&
               pr.bad_stale == 0 && pr.bad_hung == 0 && pr.connected == pr.runs,
               "random self connect (500 seeds): connected to its own qpn, no violation");
    }

    return tap_done();
}
