/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The 1:n / n:1 transport study of seed 004 (Hoefler et al., §3) on the
 * device at hand: what one node pays to reach n others, and n others to
 * reach one, over every transport the device offers, with raw verbs and
 * no MPI in the timed path (MPI only starts the processes and exchanges
 * queue pair numbers, addresses and keys).
 *
 *   mpiexec -n N+1 ibmc_transport [ITERS]        (rank 0 is the "one")
 *
 * Transports: RC send, UC send, UD send, UD multicast, RDMA write and RDMA
 * read over RC.  Patterns, as in seed 004 §3:
 *   1:n  rank 0 sends to each of the first PEERS ranks, which answer with
 *        the same operation (UD unicast for multicast; nothing for RDMA
 *        read, which is itself a round trip); rank 0 times the round from
 *        its first post to its last answer;
 *   n:1  rank 0 tells each peer "go" over RC; each then sends (or
 *        RDMA-writes, or RDMA-reads and then says "done" over RC) to rank
 *        0 at once; rank 0 times the round until it has all of them.
 * MODE one serves the peers one after another, one message in flight; all
 * posts to every peer before waiting (seed 004's finding is that several
 * messages in flight beat one).  Every round is timed by itself (seed
 * 004 measures each packet, so pipeline start-up is charged to it); the
 * reported time is the round's time / 2, in microseconds, minimum, mean and
 * maximum over ITERS rounds (default 200) after ITERS/10 warm-up rounds.
 * RDMA write completion is seen by polling the buffer's last byte, which
 * RC places last (seed 004 §3 polls the same way).
 * Sends carry their round in the immediate data.  UC, UD and multicast
 * may lose a packet (rxe drops multicast for a receiver that is not
 * scheduled): a round whose packet has not come in 200 ms is given up by
 * the peer and by rank 0, left out of the figures and counted on a "#"
 * line, and a late packet of it is dropped when it comes.
 *
 * Also measured, for the model of bench/model.py: the time of one
 * ibv_post_send call per operation and size ("post"), and of one memcpy
 * ("copy").
 *
 * Output, from rank 0 (bench/benchdata.py parses it):
 *   transport PATTERN OP PEERS SIZE MODE MIN_US AVG_US MAX_US
 *   post OP SIZE MIN_US AVG_US MAX_US
 *   copy SIZE MIN_US AVG_US MAX_US
 *   mtu BYTES
 *
 * The port: TRANSPORT_DEVICE (default the first device), port 1; rdma_cm
 * binds to TRANSPORT_IP, by default the IPv4 address that the port's
 * first IPv4-mapped GID holds (RoCE); on InfiniBand set it to the port's
 * IPoIB address. */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <mpi.h>
#include <rdma/rdma_cma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#define GRH 40
#define MAXMSG 65536
#define NRECV 16                /* receive requests kept posted per queue pair */

enum { OP_RC, OP_UC, OP_UD, OP_MCAST, OP_WRITE, OP_READ, NOPS };
static const char *op_name[NOPS] = { "rc_send", "uc_send", "ud_send", "ud_mcast", "rdma_write",
    "rdma_read"
};

/* What a process tells the others about itself. */
typedef struct {
    union ibv_gid gid;
    uint16_t lid;
    uint32_t ud_qpn;
    uint32_t rc_qpn[2][64];     /* [RC or UC][peer]: its queue pair towards that peer */
    uint64_t rdma_addr;
    uint32_t rkey;
} card_t;

typedef struct {
    struct rdma_event_channel *ev;
    struct rdma_cm_id *id;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *scq, *rcq;
    struct ibv_qp *ud;
    struct ibv_qp *conn[2][64]; /* RC and UC queue pairs, by peer rank */
    struct ibv_ah *mcast_ah, *peer_ah[64];
    uint32_t mcast_qpn, mcast_qkey;
    unsigned long stale;        /* receives of a round given up, dropped when they came */
    union ibv_gid mgid;         /* the group, attached to only while a peer takes part */
    uint16_t mlid;
    int port, sgid_index, is_roce, mtu;
    char *sbuf, *rbuf, *rdma;   /* send slot; receive slots; RDMA slots, one per rank */
    struct ibv_mr *smr, *rmr, *dmr;
    card_t *cards;              /* everyone's */
    int rank, size;
} ctx_t;

/* Receive slots: NRECV per queue pair, queue pairs numbered 0 (UD), then
 * 1 + kind * size + peer. */
#define SLOT(q, i) ((size_t) ((q) * NRECV + (i)) * (GRH + MAXMSG))
#define NQ(c) (1 + 2 * (c)->size)

static void die(const char *what)
{
    fprintf(stderr, "ibmc_transport: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

/* Busy polling, but a process that has polled long in vain lets another
 * run: with more processes than CPUs (the test VM) the one it waits for may
 * need this CPU. */
static void idle_turn(unsigned *empty)
{
    if (++*empty > 256)
        sched_yield();
}

/* A barrier that does not spin: the ranks not taking part in a
 * configuration wait here without taking CPU from those that do. */
static void quiet_barrier(void)
{
    MPI_Request r;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    while (MPI_Test(&r, &done, MPI_STATUS_IGNORE), !done) {
        struct timespec ts = {.tv_nsec = 200000 };
        nanosleep(&ts, NULL);
    }
}

static struct ibv_qp *qp_of(ctx_t * c, int q)
{
    return q == 0 ? c->ud : c->conn[(q - 1) / c->size][(q - 1) % c->size];
}

static void post_recv(ctx_t * c, int q, int i)
{
    struct ibv_sge sge = {.addr = (uintptr_t) (c->rbuf + SLOT(q, i)),.length = GRH + MAXMSG,
        .lkey = c->rmr->lkey
    };
    struct ibv_recv_wr wr = {.wr_id = (uint64_t) q * NRECV + i,.sg_list = &sge,.num_sge = 1 };
    struct ibv_recv_wr *bad;
    if (ibv_post_recv(qp_of(c, q), &wr, &bad))
        die("ibv_post_recv");
}

/* An unreliable transport (UC, UD, multicast) may lose a packet: a round
 * that waits this long for one is given up and left out of the figures.
 * rxe drops multicast packets for a receiver that is not scheduled. */
#define LOSS_WAIT_US 200000.0

static int unreliable(int op)
{
    return op == OP_UC || op == OP_UD || op == OP_MCAST;
}

/* Wait for n receives of the round `tag` (their immediate data), reposting
 * each slot at once; one of another round (late, after its round was given
 * up) is dropped.  With `bounded`, give up after LOSS_WAIT_US.  Returns how
 * many did not come. */
static int wait_recvs(ctx_t * c, int n, uint8_t tag, int bounded)
{
    struct ibv_wc wc[16];
    unsigned empty = 0;
    double deadline = now_us() + LOSS_WAIT_US;
    while (n > 0) {
        int got = ibv_poll_cq(c->rcq, 16, wc);
        if (got < 0)
            die("ibv_poll_cq(receive)");
        if (got == 0) {
            if (bounded && now_us() > deadline)
                break;
            idle_turn(&empty);
        }
        for (int i = 0; i < got; i++) {
            if (wc[i].status != IBV_WC_SUCCESS) {
                fprintf(stderr, "ibmc_transport: receive: %s\n", ibv_wc_status_str(wc[i].status));
                die("receive failed");
            }
            int q = (int) (wc[i].wr_id / NRECV), s = (int) (wc[i].wr_id % NRECV);
            post_recv(c, q, s);
            if ((wc[i].wc_flags & IBV_WC_WITH_IMM) && ntohl(wc[i].imm_data) == tag)
                n--;
            else
                c->stale++;
        }
    }
    return n;
}

static void wait_sends(ctx_t * c, int n)
{
    struct ibv_wc wc[16];
    unsigned empty = 0;
    while (n > 0) {
        int got = ibv_poll_cq(c->scq, n < 16 ? n : 16, wc);
        if (got < 0)
            die("ibv_poll_cq(send)");
        if (got == 0)
            idle_turn(&empty);
        for (int i = 0; i < got; i++)
            if (wc[i].status != IBV_WC_SUCCESS) {
                fprintf(stderr, "ibmc_transport: send: %s\n", ibv_wc_status_str(wc[i].status));
                die("send failed");
            }
        n -= got;
    }
}

/* Post one operation of `op` with `size` bytes to `peer`; its time in *post_us. */
static void post_op(ctx_t * c, int op, int peer, size_t size, uint8_t tag, double *post_us)
{
    struct ibv_sge sge = {.addr = (uintptr_t) c->sbuf,.length = (uint32_t) size,
        .lkey = c->smr->lkey
    };
    struct ibv_send_wr wr, *bad;
    memset(&wr, 0, sizeof(wr));
    wr.sg_list = &sge;
    wr.num_sge = size ? 1 : 0;
    wr.send_flags = IBV_SEND_SIGNALED;
    struct ibv_qp *qp;
    switch (op) {
        case OP_RC:
        case OP_UC:
            /* every send names its round: a late one is told from the next */
            wr.opcode = IBV_WR_SEND_WITH_IMM;
            wr.imm_data = htonl(tag);
            qp = c->conn[op == OP_UC][peer];
            break;
        case OP_UD:
        case OP_MCAST:
            wr.opcode = IBV_WR_SEND_WITH_IMM;
            wr.imm_data = htonl(tag);
            qp = c->ud;
            wr.wr.ud.ah = op == OP_MCAST ? c->mcast_ah : c->peer_ah[peer];
            wr.wr.ud.remote_qpn = op == OP_MCAST ? c->mcast_qpn : c->cards[peer].ud_qpn;
            wr.wr.ud.remote_qkey = op == OP_MCAST ? c->mcast_qkey : RDMA_UDP_QKEY;
            break;
        case OP_WRITE:
            /* into the peer's slot for this rank, last byte the round's tag */
            c->sbuf[size - 1] = (char) tag;
            wr.opcode = IBV_WR_RDMA_WRITE;
            qp = c->conn[0][peer];
            wr.wr.rdma.remote_addr = c->cards[peer].rdma_addr + (uint64_t) c->rank * MAXMSG;
            wr.wr.rdma.rkey = c->cards[peer].rkey;
            break;
        default:       /* OP_READ: the peer's slot for this rank, into this rank's send slot */
            wr.opcode = IBV_WR_RDMA_READ;
            qp = c->conn[0][peer];
            wr.wr.rdma.remote_addr = c->cards[peer].rdma_addr + (uint64_t) c->rank * MAXMSG;
            wr.wr.rdma.rkey = c->cards[peer].rkey;
            break;
    }
    double t0 = now_us();
    if (ibv_post_send(qp, &wr, &bad))
        die("ibv_post_send");
    if (post_us)
        *post_us = now_us() - t0;
}

/* The last byte of the RDMA slot written by `from` reaching `tag`; then
 * cleared, so that a later round never mistakes it for its own (the next
 * write into the slot comes only after this rank has answered). */
static void wait_written(ctx_t * c, int from, size_t size, uint8_t tag)
{
    volatile uint8_t *last = (volatile uint8_t *) (c->rdma + (size_t) from * MAXMSG + size - 1);
    unsigned empty = 0;
    while (*last != tag)
        idle_turn(&empty);
    *last = 0;
}

typedef struct {
    double min, sum, max;
    int n;
} stat_t;

static void stat_add(stat_t * s, double v)
{
    if (!s->n || v < s->min)
        s->min = v;
    if (!s->n || v > s->max)
        s->max = v;
    s->sum += v;
    s->n++;
}

/* One round at rank 0; returns its time / 2, or -1 when a packet of an
 * unreliable transport did not come (the round is left out). */
static double round_root(ctx_t * c, int op, int n_to_1, int all, int peers, size_t size,
                         uint8_t tag, stat_t * post)
{
    double t0 = now_us(), pu;
    int missing = 0;
    if (n_to_1) {
        for (int p = 1; p <= peers; p++)
            post_op(c, OP_RC, p, 1, 0, NULL);
        wait_sends(c, peers);
        if (op == OP_WRITE)
            for (int p = 1; p <= peers; p++)
                wait_written(c, p, size, tag);
        else
            missing = wait_recvs(c, peers, op == OP_READ ? 0 : tag, unreliable(op));   /* their
                                                 * sends, or their "done" after a read */
    } else if (op == OP_MCAST) {
        post_op(c, op, 0, size, tag, &pu);
        stat_add(post, pu);
        wait_sends(c, 1);
        missing = wait_recvs(c, peers, tag, 1);
    } else {
        for (int first = 1; first <= peers; first = all ? peers + 1 : first + 1) {
            int last = all ? peers : first;
            for (int p = first; p <= last; p++) {
                post_op(c, op, p, size, tag, &pu);
                stat_add(post, pu);
            }
            wait_sends(c, last - first + 1);
            if (op == OP_WRITE)
                for (int p = first; p <= last; p++)
                    wait_written(c, p, size, tag);
            else if (op != OP_READ)
                missing += wait_recvs(c, last - first + 1, tag, unreliable(op));
        }
    }
    return missing ? -1 : (now_us() - t0) / 2;
}

/* A peer's part of one round. */
static void round_peer(ctx_t * c, int op, int n_to_1, size_t size, uint8_t tag)
{
    if (n_to_1) {
        wait_recvs(c, 1, 0, 0); /* go */
        if (op == OP_READ) {
            post_op(c, OP_READ, 0, size, tag, NULL);
            wait_sends(c, 1);
            post_op(c, OP_RC, 0, 1, 0, NULL);
        } else {
            post_op(c, op, 0, size, tag, NULL);
        }
        wait_sends(c, 1);
        return;
    }
    switch (op) {
        case OP_READ:
            return;
        case OP_WRITE:
            wait_written(c, 0, size, tag);
            post_op(c, OP_WRITE, 0, size, tag, NULL);
            break;
        default:
            /* nothing came: no answer, and the root gives the round up too */
            if (wait_recvs(c, 1, tag, unreliable(op)))
                return;
            post_op(c, op == OP_MCAST ? OP_UD : op, 0, size, tag, NULL);
    }
    wait_sends(c, 1);
}

/* One configuration: every rank calls it; ranks above `peers` only wait. */
static void run_config(ctx_t * c, int op, int n_to_1, int all, int peers, size_t size, int iters)
{
    stat_t t = { 0 }, post = { 0 };
    int lost = 0;
    int warm = iters / 10;
    /* only the peers taking part receive the group's packets (a sender
     * needs no attachment): no other rank's queue fills with them */
    int attached = op == OP_MCAST && c->rank >= 1 && c->rank <= peers;
    if (attached && ibv_attach_mcast(c->ud, &c->mgid, c->mlid))
        die("ibv_attach_mcast");
    quiet_barrier();
    for (int i = 0; i < warm + iters; i++) {
        uint8_t tag = (uint8_t) (1 + i % 250);
        if (c->rank == 0) {
            double v = round_root(c, op, n_to_1, all, peers, size, tag, &post);
            if (v < 0)
                lost++;
            else if (i >= warm)
                stat_add(&t, v);
        } else if (c->rank <= peers) {
            round_peer(c, op, n_to_1, size, tag);
        }
    }
    quiet_barrier();
    if (attached && ibv_detach_mcast(c->ud, &c->mgid, c->mlid))
        die("ibv_detach_mcast");
    if (c->rank == 0) {
        if (lost)
            printf("# transport %s %s %d %zu %s: %d of %d rounds lost a packet (nothing in "
                   "%.0f ms) and are left out; %lu late receives dropped so far\n",
                   n_to_1 ? "n:1" : "1:n", op_name[op], peers, size, all ? "all" : "one", lost,
                   warm + iters, LOSS_WAIT_US / 1000, c->stale);
        if (t.n)
            printf("transport %s %s %d %zu %s %.2f %.2f %.2f\n", n_to_1 ? "n:1" : "1:n",
                   op_name[op], peers, size, all ? "all" : "one", t.min, t.sum / t.n, t.max);
        if (!n_to_1 && peers == 1 && post.n)
            printf("post %s %zu %.3f %.3f %.3f\n", op_name[op], size, post.min, post.sum / post.n,
                   post.max);
        fflush(stdout);
    }
}

static void copy_costs(int iters)
{
    size_t pool = 32u << 20;
    char *src = malloc(pool), *dst = malloc(MAXMSG);
    memset(src, 1, pool);
    for (size_t size = 8; size <= MAXMSG; size *= 8) {
        stat_t s = { 0 };
        for (int i = 0; i < iters; i++) {
            /* a different source each time: not all of it in the cache */
            size_t off = ((size_t) i * 1048583u) % (pool - MAXMSG);
            double t0 = now_us();
            memcpy(dst, src + off, size);
            stat_add(&s, now_us() - t0);
            __asm__ __volatile__("":::"memory");
        }
        printf("copy %zu %.3f %.3f %.3f\n", size, s.min, s.sum / s.n, s.max);
    }
    free(src);
    free(dst);
}

static void modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, const char *what)
{
    if (ibv_modify_qp(qp, a, mask))
        die(what);
}

/* RC or UC queue pair to `peer`, from INIT to RTS. */
static void connect_qp(ctx_t * c, int kind, int peer)
{
    struct ibv_qp *qp = c->conn[kind][peer];
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR,.path_mtu = IBV_MTU_1024,
        .dest_qp_num = c->cards[peer].rc_qpn[kind][c->rank],.rq_psn = 0,
        .max_dest_rd_atomic = 4,.min_rnr_timer = 1,
        .ah_attr = {.dlid = c->cards[peer].lid,.port_num = (uint8_t) c->port}
    };
    struct ibv_port_attr pa;
    if (!ibv_query_port(c->ctx, (uint8_t) c->port, &pa))
        a.path_mtu = pa.active_mtu;
    if (c->is_roce) {
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.dgid = c->cards[peer].gid;
        a.ah_attr.grh.sgid_index = (uint8_t) c->sgid_index;
        a.ah_attr.grh.hop_limit = 64;
    }
    int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
    if (kind == 0)
        mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    modify(qp, &a, mask, "RC/UC to RTR");
    struct ibv_qp_attr r = {.qp_state = IBV_QPS_RTS,.sq_psn = 0,.timeout = 14,.retry_cnt = 7,
        .rnr_retry = 7,.max_rd_atomic = 4
    };
    mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
    if (kind == 0)
        mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
    modify(qp, &r, mask, "RC/UC to RTS");
}

/* The device, a UD queue pair through rdma_cm (for the multicast join),
 * and RC and UC queue pairs towards the peers this rank talks to. */
static void setup(ctx_t * c)
{
    const char *ip = getenv("TRANSPORT_IP");
    const char *devname = getenv("TRANSPORT_DEVICE");
    char ipbuf[INET_ADDRSTRLEN];
    c->port = 1;
    if (!ip) {
        /* the IPv4 address of the port's first IPv4-mapped GID */
        int n;
        struct ibv_device **list = ibv_get_device_list(&n);
        struct ibv_context *ctx = NULL;
        for (int i = 0; i < n && !ctx; i++)
            if (!devname || !strcmp(ibv_get_device_name(list[i]), devname))
                ctx = ibv_open_device(list[i]);
        if (!ctx)
            die("no RDMA device (TRANSPORT_DEVICE)");
        union ibv_gid g;
        for (int i = 0; i < 64 && !ip; i++) {
            static const uint8_t v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
            if (!ibv_query_gid(ctx, (uint8_t) c->port, i, &g) && !memcmp(g.raw, v4, 12))
                ip = inet_ntop(AF_INET, g.raw + 12, ipbuf, sizeof(ipbuf));
        }
        ibv_close_device(ctx);
        ibv_free_device_list(list);
        if (!ip)
            die("no IPv4-mapped GID on port 1: set TRANSPORT_IP to the port's IPoIB address");
    }
    struct sockaddr_in sin = {.sin_family = AF_INET };
    inet_pton(AF_INET, ip, &sin.sin_addr);
    if (!(c->ev = rdma_create_event_channel()) ||
        rdma_create_id(c->ev, &c->id, NULL, RDMA_PS_UDP) ||
        rdma_bind_addr(c->id, (struct sockaddr *) &sin) || !c->id->verbs)
        die("rdma_cm could not bind to the port's address");
    c->ctx = c->id->verbs;
    c->port = c->id->port_num;
    struct ibv_port_attr pa;
    if (ibv_query_port(c->ctx, (uint8_t) c->port, &pa))
        die("ibv_query_port");
    c->is_roce = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
    c->mtu = 128 << pa.active_mtu;
    c->pd = ibv_alloc_pd(c->ctx);
    int cqe = NQ(c) * NRECV + 256;
    c->scq = ibv_create_cq(c->ctx, 256, NULL, NULL, 0);
    c->rcq = ibv_create_cq(c->ctx, cqe, NULL, NULL, 0);
    if (!c->pd || !c->scq || !c->rcq)
        die("PD or CQ");
    size_t rsize = SLOT(NQ(c), 0), dsize = (size_t) c->size * MAXMSG;
    c->sbuf = aligned_alloc(4096, MAXMSG);
    c->rbuf = aligned_alloc(4096, rsize);
    c->rdma = aligned_alloc(4096, dsize);
    if (!c->sbuf || !c->rbuf || !c->rdma)
        die("out of memory");
    memset(c->sbuf, 7, MAXMSG);
    memset(c->rdma, 0, dsize);
    c->smr = ibv_reg_mr(c->pd, c->sbuf, MAXMSG, IBV_ACCESS_LOCAL_WRITE);
    c->rmr = ibv_reg_mr(c->pd, c->rbuf, rsize, IBV_ACCESS_LOCAL_WRITE);
    c->dmr = ibv_reg_mr(c->pd, c->rdma, dsize, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                        IBV_ACCESS_REMOTE_READ);
    if (!c->smr || !c->rmr || !c->dmr)
        die("ibv_reg_mr");

    /* UD */
    struct ibv_qp_init_attr ia = {.send_cq = c->scq,.recv_cq = c->rcq,.qp_type = IBV_QPT_UD,
        .cap = {.max_send_wr = 64,.max_recv_wr = NRECV,.max_send_sge = 1,.max_recv_sge = 1}
    };
    if (!(c->ud = ibv_create_qp(c->pd, &ia)))
        die("ibv_create_qp(UD)");
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,.pkey_index = 0,.port_num = (uint8_t) c->port,
        .qkey = RDMA_UDP_QKEY
    };
    modify(c->ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, "UD INIT");
    a.qp_state = IBV_QPS_RTR;
    modify(c->ud, &a, IBV_QP_STATE, "UD RTR");
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 0;
    modify(c->ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN, "UD RTS");
    for (int i = 0; i < NRECV; i++)
        post_recv(c, 0, i);

    /* the GID rdma_cm's address maps, and its index */
    union ibv_gid want = {.raw = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff} }, g;
    memcpy(want.raw + 12, &sin.sin_addr, 4);
    c->sgid_index = 0;
    for (int i = 0; c->is_roce && i < 64; i++)
        if (!ibv_query_gid(c->ctx, (uint8_t) c->port, i, &g) && !memcmp(&g, &want, 16)) {
            c->sgid_index = i;
            break;
        }

    /* RC and UC queue pairs: rank 0 to every other, the others to rank 0 */
    card_t me;
    memset(&me, 0, sizeof(me));
    if (ibv_query_gid(c->ctx, (uint8_t) c->port, c->sgid_index, &me.gid))
        die("ibv_query_gid");
    me.lid = pa.lid;
    me.ud_qpn = c->ud->qp_num;
    me.rdma_addr = (uintptr_t) c->rdma;
    me.rkey = c->dmr->rkey;
    for (int kind = 0; kind < 2; kind++)
        for (int p = 0; p < c->size; p++) {
            if (p == c->rank || (c->rank != 0 && p != 0))
                continue;
            struct ibv_qp_init_attr ci = {.send_cq = c->scq,.recv_cq = c->rcq,
                .qp_type = kind ? IBV_QPT_UC : IBV_QPT_RC,
                .cap = {.max_send_wr = 64,.max_recv_wr = NRECV,.max_send_sge = 1,
                        .max_recv_sge = 1}
            };
            if (!(c->conn[kind][p] = ibv_create_qp(c->pd, &ci)))
                die(kind ? "ibv_create_qp(UC)" : "ibv_create_qp(RC)");
            struct ibv_qp_attr ai = {.qp_state = IBV_QPS_INIT,.pkey_index = 0,
                .port_num = (uint8_t) c->port,
                .qp_access_flags = kind ? IBV_ACCESS_REMOTE_WRITE :
                    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ
            };
            modify(c->conn[kind][p], &ai, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                   IBV_QP_ACCESS_FLAGS, "RC/UC INIT");
            for (int i = 0; i < NRECV; i++)
                post_recv(c, 1 + kind * c->size + p, i);
            me.rc_qpn[kind][p] = c->conn[kind][p]->qp_num;
        }
    c->cards = malloc(sizeof(card_t) * (size_t) c->size);
    MPI_Allgather(&me, sizeof(me), MPI_BYTE, c->cards, sizeof(me), MPI_BYTE, MPI_COMM_WORLD);
    for (int kind = 0; kind < 2; kind++)
        for (int p = 0; p < c->size; p++)
            if (c->conn[kind][p])
                connect_qp(c, kind, p);
    for (int p = 0; p < c->size; p++) {
        if (p == c->rank)
            continue;
        struct ibv_ah_attr ah = {.dlid = c->cards[p].lid,.port_num = (uint8_t) c->port };
        if (c->is_roce) {
            ah.is_global = 1;
            ah.grh.dgid = c->cards[p].gid;
            ah.grh.sgid_index = (uint8_t) c->sgid_index;
            ah.grh.hop_limit = 64;
        }
        if (!(c->peer_ah[p] = ibv_create_ah(c->pd, &ah)))
            die("ibv_create_ah(unicast)");
    }

    /* one multicast group for the job, joined by everyone */
    unsigned grp_id = 0;
    if (c->rank == 0)
        grp_id = (unsigned) (now_us()) & 0xffff;
    MPI_Bcast(&grp_id, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
    struct sockaddr_in grp = {.sin_family = AF_INET };
    grp.sin_addr.s_addr = htonl(0xefc00000u | grp_id);  /* 239.192.x.y */
    struct rdma_cm_event *ev;
    if (rdma_join_multicast(c->id, (struct sockaddr *) &grp, NULL) ||
        rdma_get_cm_event(c->ev, &ev))
        die("rdma_join_multicast");
    if (ev->event != RDMA_CM_EVENT_MULTICAST_JOIN)
        die("the multicast join failed");
    struct ibv_ah_attr mah = ev->param.ud.ah_attr;
    c->mcast_qpn = ev->param.ud.qp_num;
    c->mcast_qkey = ev->param.ud.qkey;
    rdma_ack_cm_event(ev);
    c->mgid = mah.grh.dgid;
    c->mlid = mah.dlid;
    if (!(c->mcast_ah = ibv_create_ah(c->pd, &mah)))
        die("ibv_create_ah(multicast)");
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    ctx_t c;
    memset(&c, 0, sizeof(c));
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.size);
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    if (c.size < 2 || c.size > 64)
        die("run with 2 to 64 processes");
    setup(&c);
    int n = c.size - 1;
    if (c.rank == 0) {
        printf("# ibmc_transport: device %s port %d link %s, %d peers, %d rounds each\n",
               ibv_get_device_name(c.ctx->device), c.port, c.is_roce ? "Ethernet" : "InfiniBand",
               n, iters);
        printf("mtu %d\n", c.mtu);
        copy_costs(20 * iters);
    }
    static const size_t sizes[] = { 8, 64, 512, 1024, 4096, 16384, 65536 };
    for (int op = 0; op < NOPS; op++)
        for (int n_to_1 = 0; n_to_1 < 2; n_to_1++) {
            if (op == OP_MCAST && n_to_1)
                continue;       /* many to one has no multicast */
            for (int all = 0; all < 2; all++) {
                /* one multicast packet reaches every peer: one in flight;
                 * many to one: every peer at once */
                if ((op == OP_MCAST && all) || (n_to_1 && !all))
                    continue;
                /* sizes with one peer and with all, then peers 1..n at 64 bytes */
                for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
                    if ((op == OP_UD || op == OP_MCAST) && sizes[k] > (size_t) c.mtu)
                        break;
                    run_config(&c, op, n_to_1, all, 1, sizes[k], iters);
                    if (n > 1)
                        run_config(&c, op, n_to_1, all, n, sizes[k], iters);
                }
                for (int p = 2; p < n; p++)
                    run_config(&c, op, n_to_1, all, p, 64, iters);
            }
        }
    MPI_Finalize();
    return 0;
}
