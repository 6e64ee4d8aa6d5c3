/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The device's own UD latency, unicast against multicast: the floor under a
 * multicast broadcast and under the point-to-point messages of a binomial
 * tree, on the device at hand, with no MPI in between.
 *
 * Two processes (this one and a fork) on one device each open a UD queue
 * pair through rdma_cm and ping-pong ITERS messages of each size: first
 * addressed to the peer's QP (unicast), then to a multicast group both have
 * joined (each drops its own looped-back copy).  Busy polling; the first
 * 10 % of each run are warm-up.  Prints, per mode and size, the one-way time
 * (round trip / 2): minimum, median, 99th percentile.
 *
 * usage: ud_lat IPV4_ADDRESS_OF_THE_PORT [ITERS [SIZE...]]
 *        (defaults: 2000 iterations, 8 64 512 1024 bytes; a UD message is
 *        one packet, so no size may exceed the path MTU) */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GRH 40
#define NRECV 64
#define MAXSZ 4096

typedef struct {
    struct rdma_event_channel *ev;
    struct rdma_cm_id *id;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    char *buf;                  /* NRECV receive slots, then the send slot */
    struct ibv_ah *uni, *multi;
    uint32_t peer_qpn;
} end_t;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void post_recv(end_t * e, int i)
{
    struct ibv_sge sge = {.addr = (uintptr_t) (e->buf + (size_t) i * (GRH + MAXSZ)),
        .length = GRH + MAXSZ,.lkey = e->mr->lkey
    };
    struct ibv_recv_wr wr = {.wr_id = (uint64_t) i,.sg_list = &sge,.num_sge = 1 }, *bad;
    if (ibv_post_recv(e->qp, &wr, &bad))
        die("ibv_post_recv");
}

/* A UD QP on the device rdma_cm bound the address to, ready to send. */
static void open_end(end_t * e, const char *ip)
{
    struct sockaddr_in sin = {.sin_family = AF_INET };
    inet_pton(AF_INET, ip, &sin.sin_addr);
    if (!(e->ev = rdma_create_event_channel()) ||
        rdma_create_id(e->ev, &e->id, NULL, RDMA_PS_UDP) ||
        rdma_bind_addr(e->id, (struct sockaddr *) &sin) || !e->id->verbs)
        die("rdma_cm bind");
    e->pd = ibv_alloc_pd(e->id->verbs);
    e->cq = ibv_create_cq(e->id->verbs, 2 * NRECV, NULL, NULL, 0);
    struct ibv_qp_init_attr ia = {.send_cq = e->cq,.recv_cq = e->cq,.qp_type = IBV_QPT_UD,
        .cap = {.max_send_wr = 16,.max_recv_wr = NRECV,.max_send_sge = 1,.max_recv_sge = 1}
    };
    if (!e->pd || !e->cq || !(e->qp = ibv_create_qp(e->pd, &ia)))
        die("ibv_create_qp");
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,.pkey_index = 0,
        .port_num = e->id->port_num,.qkey = RDMA_UDP_QKEY
    };
    if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
        die("INIT");
    a.qp_state = IBV_QPS_RTR;
    if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE))
        die("RTR");
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 0;
    if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
        die("RTS");
    size_t sz = (size_t) (NRECV + 1) * (GRH + MAXSZ);
    e->buf = aligned_alloc(4096, sz);
    if (!e->buf || !(e->mr = ibv_reg_mr(e->pd, e->buf, sz, IBV_ACCESS_LOCAL_WRITE)))
        die("ibv_reg_mr");
    for (int i = 0; i < NRECV; i++)
        post_recv(e, i);

    /* unicast: to the port's own address (both ends are on it), by the GID
     * that maps the IPv4 address */
    union ibv_gid want = {.raw = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff} }, g;
    memcpy(want.raw + 12, &sin.sin_addr, 4);
    int idx = -1;
    for (int i = 0; i < 64 && idx < 0; i++)
        if (!ibv_query_gid(e->id->verbs, e->id->port_num, i, &g) && !memcmp(&g, &want, 16))
            idx = i;
    if (idx < 0)
        die("no GID maps the address");
    struct ibv_ah_attr ah = {.is_global = 1,.port_num = e->id->port_num,
        .grh = {.dgid = want,.sgid_index = (uint8_t) idx,.hop_limit = 64}
    };
    if (!(e->uni = ibv_create_ah(e->pd, &ah)))
        die("ibv_create_ah(unicast)");

    /* multicast: one group, joined by both ends */
    struct sockaddr_in grp = {.sin_family = AF_INET };
    inet_pton(AF_INET, "239.77.0.77", &grp.sin_addr);
    struct rdma_cm_event *ev;
    if (rdma_join_multicast(e->id, (struct sockaddr *) &grp, NULL) ||
        rdma_get_cm_event(e->ev, &ev))
        die("rdma_join_multicast");
    if (ev->event != RDMA_CM_EVENT_MULTICAST_JOIN) {
        fprintf(stderr, "ud_lat: join: %s\n", rdma_event_str(ev->event));
        exit(1);
    }
    struct ibv_ah_attr mah = ev->param.ud.ah_attr;
    rdma_ack_cm_event(ev);
    if (!(e->multi = ibv_create_ah(e->pd, &mah)) ||
        ibv_attach_mcast(e->qp, &mah.grh.dgid, mah.dlid))
        die("multicast AH or attach");
}

static void send_one(end_t * e, int multi, size_t len)
{
    struct ibv_sge sge = {.addr = (uintptr_t) (e->buf + (size_t) NRECV * (GRH + MAXSZ)),
        .length = (uint32_t) len,.lkey = e->mr->lkey
    };
    struct ibv_send_wr wr = {.sg_list = &sge,.num_sge = 1,.opcode = IBV_WR_SEND,
        .send_flags = IBV_SEND_SIGNALED
    }, *bad;
    wr.wr.ud.ah = multi ? e->multi : e->uni;
    wr.wr.ud.remote_qpn = multi ? 0xffffff : e->peer_qpn;
    wr.wr.ud.remote_qkey = RDMA_UDP_QKEY;
    if (ibv_post_send(e->qp, &wr, &bad))
        die("ibv_post_send");
}

/* Poll until the peer's message arrives; own looped-back copies and send
 * completions are consumed on the way. */
static void wait_peer(end_t * e)
{
    for (;;) {
        struct ibv_wc wc;
        int n = ibv_poll_cq(e->cq, 1, &wc);
        if (n < 0 || (n && wc.status != IBV_WC_SUCCESS)) {
            fprintf(stderr, "ud_lat: completion %s\n", n < 0 ? "poll failed" :
                    ibv_wc_status_str(wc.status));
            exit(1);
        }
        if (!n || !(wc.opcode & IBV_WC_RECV))
            continue;
        post_recv(e, (int) wc.wr_id);
        if (wc.src_qp == e->peer_qpn)
            return;
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: ud_lat IPV4_ADDRESS [ITERS [SIZE...]]\n");
        return 2;
    }
    int iters = argc > 2 ? atoi(argv[2]) : 2000;
    size_t def[] = { 8, 64, 512, 1024 }, sizes[16];
    int nsz = 0;
    for (int i = 3; i < argc && nsz < 16; i++)
        sizes[nsz++] = strtoul(argv[i], NULL, 0);
    if (!nsz)
        for (nsz = 0; nsz < 4; nsz++)
            sizes[nsz] = def[nsz];
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        die("pipe");
    pid_t child = fork();
    int server = child == 0;
    end_t e = { 0 };
    open_end(&e, argv[1]);
    /* swap QP numbers: the server writes first */
    uint32_t mine = e.qp->qp_num;
    if (server) {
        if (write(up[1], &mine, 4) != 4 || read(down[0], &e.peer_qpn, 4) != 4)
            die("pipe");
    } else {
        if (read(up[0], &e.peer_qpn, 4) != 4 || write(down[1], &mine, 4) != 4)
            die("pipe");
        printf("%-9s %6s %8s %10s %10s %10s\n", "mode", "bytes", "iters", "min_us",
               "median_us", "p99_us");
    }
    double *rtt = malloc(sizeof(double) * (size_t) iters);
    for (int multi = 0; multi < 2; multi++) {
        for (int s = 0; s < nsz; s++) {
            int warm = iters / 10;
            for (int i = 0; i < iters + warm; i++) {
                if (server) {
                    wait_peer(&e);
                    send_one(&e, multi, sizes[s]);
                } else {
                    double t0 = now();
                    send_one(&e, multi, sizes[s]);
                    wait_peer(&e);
                    if (i >= warm)
                        rtt[i - warm] = now() - t0;
                }
            }
            if (!server) {
                qsort(rtt, (size_t) iters, sizeof(double), cmp);
                printf("%-9s %6zu %8d %10.2f %10.2f %10.2f\n", multi ? "multicast" : "unicast",
                       sizes[s], iters, rtt[0] / 2 * 1e6, rtt[iters / 2] / 2 * 1e6,
                       rtt[(size_t) (iters * 0.99)] / 2 * 1e6);
                fflush(stdout);
            }
        }
    }
    if (!server)
        waitpid(child, NULL, 0);
    return 0;
}
