/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* ibmc_info: the multicast check.  It takes the path ibmc's multicast
 * channel takes (mcast/ibmc_mcast_device.c): an rdma_cm UD id bound to the IPv4 address
 * that the port's GID maps, rdma_join_multicast on a group (the subnet
 * manager answers on InfiniBand, an IGMP join on RoCE), a UD queue pair with
 * rdma_cm's Q_Key attached to the group; then it sends one probe datagram to
 * the group and waits for it to come back (an HCA, and Soft-RoCE, delivers a
 * multicast packet to every queue pair attached on the port, the sender's
 * included), and leaves.  Each step is printed with its time, and a failure
 * names the call and its errno or the rdma_cm event and its status. */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include "ibmc_info.h"
#include "ibmc_ipoib.h"

#define GRH_BYTES 40            /* a UD receive starts with the global routing header */
#define PROBE_BYTES 64
#define NUM_RECVS 4             /* room for strangers' datagrams on the group */
#define SLOT_BYTES (GRH_BYTES + PROBE_BYTES)
/* Linux's internal ENOTSUPP, which rdma_cm passes to user space as is */
#define KERNEL_ENOTSUPP 524

typedef struct {
    struct rdma_event_channel *ch;
    struct rdma_cm_id *id;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_mr *mr;
    struct ibv_ah *ah;
    int qp_created;
    int joined;
    char *buf;                  /* NUM_RECVS receive slots, then the probe */
    struct sockaddr_storage group;
    char group_str[INET6_ADDRSTRLEN];
    char failure[512];          /* the first failure, for the summary */
} mc_t;

static const char *err_str(int err, char *buf, size_t len)
{
    if (err == KERNEL_ENOTSUPP)
        snprintf(buf, len, "not supported by the kernel for this address or GID type "
                 "(ENOTSUPP, %d)", err);
    else
        snprintf(buf, len, "%s (errno %d)", strerror(err), err);
    return buf;
}

/* Print a failed step and keep the first one for the summary. */
static int step_fail(mc_t * m, const char *step, const char *fmt, ...)
    __attribute__ ((format(printf, 3, 4)));

static int step_fail(mc_t * m, const char *step, const char *fmt, ...)
{
    char msg[sizeof(m->failure)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    char lead[32];
    snprintf(lead, sizeof(lead), "    %-11s ", step);
    info_say(lead, "FAILED: %s", msg);
    if (!m->failure[0])
        snprintf(m->failure, sizeof(m->failure), "%s", msg);
    return -1;
}

static int call_fail(mc_t * m, const char *step, const char *call, int err)
{
    char e[128];
    return step_fail(m, step, "%s failed: %s", call, err_str(err ? err : EIO, e, sizeof(e)));
}

/* A group in 239.0.0.0/8, the administratively scoped IPv4 block (RFC 2365)
 * that rdma_cm maps to an MGID on InfiniBand and to an IP multicast group on
 * RoCE: 239.a.b.c with a in 1..254 (239.0/16 and 239.255/16 have special
 * uses) and a, b, c from the pid and the time, so that concurrent checks on
 * one fabric use different groups. */
static void derive_group(struct sockaddr_in *sin)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t h = ((uint64_t) getpid() << 32) ^ ((uint64_t) ts.tv_sec * 1000000007u) ^
        (uint64_t) ts.tv_nsec;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    memset(sin, 0, sizeof(*sin));
    sin->sin_family = AF_INET;
    sin->sin_addr.s_addr = htonl(0xef000000u | (uint32_t) (1 + h % 254) << 16 |
                                 (uint32_t) ((h >> 16) & 0xffff));
}

static int parse_group(mc_t * m, const char *text)
{
    struct sockaddr_in *sin = (struct sockaddr_in *) &m->group;
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) &m->group;

    memset(&m->group, 0, sizeof(m->group));
    if (inet_pton(AF_INET, text, &sin->sin_addr) == 1) {
        sin->sin_family = AF_INET;
        if (!IN_MULTICAST(ntohl(sin->sin_addr.s_addr)))
            printf("    note        %s is not an IPv4 multicast address (224.0.0.0/4)\n", text);
    } else if (inet_pton(AF_INET6, text, &sin6->sin6_addr) == 1) {
        sin6->sin6_family = AF_INET6;
        if (!IN6_IS_ADDR_MULTICAST(&sin6->sin6_addr))
            printf("    note        %s is not an IPv6 multicast address (ff00::/8)\n", text);
    } else {
        return -1;
    }
    snprintf(m->group_str, sizeof(m->group_str), "%s", text);
    return 0;
}

/* The next rdma_cm event, waiting until `deadline`.  Returns 0, or the
 * errno (ETIMEDOUT when the deadline passed). */
static int next_event(mc_t * m, double deadline, struct rdma_cm_event **ev)
{
    for (;;) {
        if (rdma_get_cm_event(m->ch, ev) == 0)
            return 0;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return errno;
        double left = deadline - info_now();
        if (left <= 0)
            return ETIMEDOUT;
        struct pollfd pfd = {.fd = m->ch->fd,.events = POLLIN };
        if (poll(&pfd, 1, (int) (left * 1000) + 1) < 0 && errno != EINTR)
            return errno;
    }
}

static int setup_id(mc_t * m, const info_pick_t * pick, const struct sockaddr_in *src)
{
    char a[INET_ADDRSTRLEN], call[64];

    m->ch = rdma_create_event_channel();
    if (!m->ch)
        return call_fail(m, "rdma_cm", "rdma_create_event_channel", errno);
    int fl = fcntl(m->ch->fd, F_GETFL);
    if (fl < 0 || fcntl(m->ch->fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return call_fail(m, "rdma_cm", "fcntl(O_NONBLOCK) on the event channel", errno);
    if (rdma_create_id(m->ch, &m->id, NULL, RDMA_PS_UDP))
        return call_fail(m, "rdma_cm", "rdma_create_id(RDMA_PS_UDP)", errno);
    inet_ntop(AF_INET, &src->sin_addr, a, sizeof(a));
    snprintf(call, sizeof(call), "rdma_bind_addr(%s)", a);
    if (rdma_bind_addr(m->id, (struct sockaddr *) src))
        return call_fail(m, "rdma_cm", call, errno);
    const char *bound = m->id->verbs ? ibv_get_device_name(m->id->verbs->device) : "(none)";
    if (!m->id->verbs || strcmp(bound, pick->dev_name) || m->id->port_num != pick->port)
        return step_fail(m, "rdma_cm", "rdma_cm bound %s to device %s port %d, not %s port %d "
                         "(is the address on another device's netdev too?)", a, bound,
                         m->id->port_num, pick->dev_name, pick->port);
    printf("    rdma_cm     UD id bound to %s on %s port %d\n", a, bound, m->id->port_num);
    return 0;
}

/* Join, and wait for rdma_cm's answer. */
static int join(mc_t * m, double timeout_s, struct rdma_ud_param *ud)
{
    char call[96], e[128];
    snprintf(call, sizeof(call), "rdma_join_multicast(%s)", m->group_str);

    double t0 = info_now();
    if (rdma_join_multicast(m->id, (struct sockaddr *) &m->group, NULL))
        return call_fail(m, "join", call, errno);
    m->joined = 1;

    struct rdma_cm_event *ev;
    int err = next_event(m, t0 + timeout_s, &ev);
    if (err == ETIMEDOUT)
        return step_fail(m, "join", "%s: no answer within %g s (on InfiniBand the subnet "
                         "manager answers joins: is one running?)", call, timeout_s);
    if (err)
        return call_fail(m, "join", "rdma_get_cm_event", err);
    double t1 = info_now();
    int event = ev->event, status = ev->status;
    *ud = ev->param.ud;
    rdma_ack_cm_event(ev);
    if (event != RDMA_CM_EVENT_MULTICAST_JOIN) {
        m->joined = 0;
        return step_fail(m, "join", "%s: rdma_cm answered %s, status %d%s%s", call,
                         rdma_event_str(event), status, status < 0 ? ": " : "",
                         status < 0 ? err_str(-status, e, sizeof(e)) : "");
    }

    char mgid[INET6_ADDRSTRLEN];
    info_gid_str(ud->ah_attr.grh.dgid.raw, mgid, sizeof(mgid));
    printf("    join        ok in %.1f ms: MGID %s, MLID %#x, Q_Key %#x\n", (t1 - t0) * 1e3,
           mgid, ud->ah_attr.dlid, ud->qkey);
    if (ud->qkey != RDMA_UDP_QKEY)
        return step_fail(m, "join", "the group's Q_Key is %#x, not rdma_cm's %#x; ibmc "
                         "refuses such a group", ud->qkey, RDMA_UDP_QKEY);
    return 0;
}

/* Queue pair, attachment, one probe out and back. */
static int probe(mc_t * m, double timeout_s, const struct rdma_ud_param *ud)
{
    struct ibv_context *ctx = m->id->verbs;
    char text[PROBE_BYTES];
    struct timespec ts;

    m->pd = ibv_alloc_pd(ctx);
    if (!m->pd)
        return call_fail(m, "probe", "ibv_alloc_pd", errno);
    m->cq = ibv_create_cq(ctx, 2 * NUM_RECVS + 2, NULL, NULL, 0);
    if (!m->cq)
        return call_fail(m, "probe", "ibv_create_cq", errno);

    struct ibv_qp_init_attr qa;
    memset(&qa, 0, sizeof(qa));
    qa.qp_type = IBV_QPT_UD;
    qa.send_cq = m->cq;
    qa.recv_cq = m->cq;
    qa.cap.max_send_wr = 1;
    qa.cap.max_recv_wr = NUM_RECVS;
    qa.cap.max_send_sge = 1;
    qa.cap.max_recv_sge = 1;
    /* rdma_cm brings a UD queue pair of an RDMA_PS_UDP id to RTS with its
     * Q_Key, as ibmc does with its own */
    if (rdma_create_qp(m->id, m->pd, &qa))
        return call_fail(m, "probe", "rdma_create_qp(UD)", errno);
    m->qp_created = 1;
    struct ibv_ah_attr ah_attr = ud->ah_attr;
    int rc = ibv_attach_mcast(m->id->qp, &ah_attr.grh.dgid, ah_attr.dlid);
    if (rc)
        return call_fail(m, "probe", "ibv_attach_mcast", rc);
    m->ah = ibv_create_ah(m->pd, &ah_attr);
    if (!m->ah)
        return call_fail(m, "probe", "ibv_create_ah(group)", errno);

    m->buf = calloc(NUM_RECVS + 1, SLOT_BYTES);
    if (!m->buf)
        return call_fail(m, "probe", "calloc", ENOMEM);
    m->mr = ibv_reg_mr(m->pd, m->buf, (NUM_RECVS + 1) * SLOT_BYTES, IBV_ACCESS_LOCAL_WRITE);
    if (!m->mr)
        return call_fail(m, "probe", "ibv_reg_mr", errno);
    for (int i = 0; i < NUM_RECVS; i++) {
        struct ibv_sge sge = {.addr = (uintptr_t) (m->buf + i * SLOT_BYTES),
            .length = SLOT_BYTES,.lkey = m->mr->lkey
        };
        struct ibv_recv_wr wr = {.wr_id = (uint64_t) i,.sg_list = &sge,.num_sge = 1 }, *bad;
        rc = ibv_post_recv(m->id->qp, &wr, &bad);
        if (rc)
            return call_fail(m, "probe", "ibv_post_recv", rc);
    }

    clock_gettime(CLOCK_REALTIME, &ts);
    memset(text, 0, sizeof(text));
    snprintf(text, sizeof(text), "ibmc_info probe pid %d qp %#x t %lld.%09ld", (int) getpid(),
             m->id->qp->qp_num, (long long) ts.tv_sec, ts.tv_nsec);
    char *out = m->buf + NUM_RECVS * SLOT_BYTES;
    memcpy(out, text, PROBE_BYTES);
    struct ibv_sge sge = {.addr = (uintptr_t) out,.length = PROBE_BYTES,.lkey = m->mr->lkey };
    struct ibv_send_wr wr, *bad;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = NUM_RECVS;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = m->ah;
    wr.wr.ud.remote_qpn = ud->qp_num;
    wr.wr.ud.remote_qkey = ud->qkey;
    double t0 = info_now(), deadline = t0 + timeout_s, t_sent = 0, t_back = 0;
    rc = ibv_post_send(m->id->qp, &wr, &bad);
    if (rc)
        return call_fail(m, "probe", "ibv_post_send", rc);

    int strangers = 0;
    while (!t_sent || !t_back) {
        struct ibv_wc wc[4];
        int n = ibv_poll_cq(m->cq, 4, wc);
        if (n < 0)
            return call_fail(m, "probe", "ibv_poll_cq", EIO);
        for (int i = 0; i < n; i++) {
            if (wc[i].status != IBV_WC_SUCCESS)
                return step_fail(m, "probe", "the %s completed with status %s (%d)",
                                 wc[i].wr_id == NUM_RECVS ? "send" : "receive",
                                 ibv_wc_status_str(wc[i].status), wc[i].status);
            if (wc[i].wr_id == NUM_RECVS) {
                t_sent = info_now();
                continue;
            }
            const char *in = m->buf + wc[i].wr_id * SLOT_BYTES + GRH_BYTES;
            if (wc[i].byte_len == SLOT_BYTES && !memcmp(in, text, PROBE_BYTES))
                t_back = info_now();
            else
                strangers++;
        }
        if (!n && info_now() > deadline) {
            if (!t_sent)
                return step_fail(m, "probe", "the send to the group did not complete within "
                                 "%g s", timeout_s);
            return step_fail(m, "probe", "sent to the group, but not received back within "
                             "%g s%s: the fabric does not deliver the group to this port",
                             timeout_s, strangers ? " (only other datagrams came)" : "");
        }
        if (!n)
            sched_yield();
    }
    printf("    probe       ok: %d bytes sent to the group from QP %#x and received back in "
           "%.2f ms\n", PROBE_BYTES, m->id->qp->qp_num, (t_back - t0) * 1e3);
    return 0;
}

static void teardown(mc_t * m)
{
    if (m->joined) {
        double t0 = info_now();
        /* also detaches the queue pair from the group */
        if (rdma_leave_multicast(m->id, (struct sockaddr *) &m->group))
            call_fail(m, "leave", "rdma_leave_multicast", errno);
        else
            printf("    leave       ok in %.2f ms\n", (info_now() - t0) * 1e3);
    }
    if (m->qp_created)
        rdma_destroy_qp(m->id);
    if (m->ah)
        ibv_destroy_ah(m->ah);
    if (m->mr)
        ibv_dereg_mr(m->mr);
    if (m->cq)
        ibv_destroy_cq(m->cq);
    if (m->pd)
        ibv_dealloc_pd(m->pd);
    if (m->id)
        rdma_destroy_id(m->id);
    if (m->ch)
        rdma_destroy_event_channel(m->ch);
    free(m->buf);
}

int info_mcast_check(const info_pick_t * pick, const char *group, double timeout_s)
{
    static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    struct sockaddr_in src;
    struct rdma_ud_param ud;
    mc_t m;
    int rc;

    memset(&m, 0, sizeof(m));
    if (group) {
        if (parse_group(&m, group)) {
            printf("    group       FAILED: \"%s\" is not an IPv4 or IPv6 address\n", group);
            printf("multicast check: FAILED: bad group address \"%s\"\n", group);
            return -1;
        }
        printf("    group       %s (given with -g)\n", m.group_str);
    } else {
        derive_group((struct sockaddr_in *) &m.group);
        inet_ntop(AF_INET, &((struct sockaddr_in *) &m.group)->sin_addr, m.group_str,
                  sizeof(m.group_str));
        printf("    group       %s (239.0.0.0/8, derived from pid %d and the time)\n",
               m.group_str, (int) getpid());
    }

    /* as mcast/ibmc_mcast_device.c's local_ipv4: rdma_cm binds to the IPv4 address of
     * the port's IPoIB interface on InfiniBand, to the one the GID maps on
     * RoCE */
    memset(&src, 0, sizeof(src));
    src.sin_family = AF_INET;
    if (pick->link_layer == IBMC_LL_INFINIBAND) {
        if (ibmc_ipoib_ipv4(pick->gid, &src.sin_addr)) {
            step_fail(&m, "source", "%s port %d is InfiniBand and has no IPoIB interface with "
                      "an IPv4 address, which rdma_cm needs to join multicast groups",
                      pick->dev_name, pick->port);
            printf("multicast check: FAILED: %s\n", m.failure);
            return -1;
        }
    } else if (memcmp(pick->gid, v4mapped, sizeof(v4mapped))) {
        step_fail(&m, "source", "GID [%d] of %s port %d maps no IPv4 address, and ibmc's "
                  "multicast channel binds rdma_cm to the IPv4 address of its GID (choose "
                  "a RoCE v2 IPv4 GID with MPIR_CVAR_IBMC_GID_INDEX)", pick->gid_index,
                  pick->dev_name, pick->port);
        printf("multicast check: FAILED: %s\n", m.failure);
        return -1;
    } else {
        memcpy(&src.sin_addr, pick->gid + 12, 4);
    }

    double t0 = info_now();
    rc = setup_id(&m, pick, &src);
    if (!rc)
        rc = join(&m, timeout_s, &ud);
    if (!rc)
        rc = probe(&m, timeout_s, &ud);
    teardown(&m);
    if (rc || m.failure[0]) {
        printf("multicast check: FAILED: %s\n", m.failure);
        return -1;
    }
    printf("multicast check: ok (%s port %d, group %s, %.1f ms in all)\n", pick->dev_name,
           pick->port, m.group_str, (info_now() - t0) * 1e3);
    return 0;
}
