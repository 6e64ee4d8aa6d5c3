/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Writes the seed corpora of the fuzz targets: `gen_seeds DIR` creates
 * DIR/<target>/<name> (make seeds).  Each seed is a short, meaningful
 * scenario in the input encoding its harness documents, so the fuzzers
 * start from valid traffic and mutate from there.  Deterministic: running
 * it again writes the same bytes. */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "ibmc_pkt.h"
#include "ibmc_mcast_wire.h"

typedef struct {
    uint8_t b[4096];
    size_t n;
} seed_t;

static const char *outdir;

static void u8(seed_t * s, unsigned v)
{
    if (s->n >= sizeof(s->b)) {
        fprintf(stderr, "seed too long\n");
        exit(1);
    }
    s->b[s->n++] = (uint8_t) v;
}

static void u16(seed_t * s, unsigned v)
{
    u8(s, v & 0xff);
    u8(s, v >> 8 & 0xff);
}

static void u32(seed_t * s, uint32_t v)
{
    u16(s, v & 0xffff);
    u16(s, v >> 16);
}

static void u64(seed_t * s, uint64_t v)
{
    u32(s, (uint32_t) v);
    u32(s, (uint32_t) (v >> 32));
}

static void mem(seed_t * s, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        u8(s, ((const uint8_t *) p)[i]);
}

/* n bytes of a recognizable pattern */
static void fill(seed_t * s, size_t n, unsigned tag)
{
    for (size_t i = 0; i < n; i++)
        u8(s, (tag * 37 + i * 11 + 1) & 0xff);
}

static void mkdir_p(const char *d)
{
    if (mkdir(d, 0755) && errno != EEXIST) {
        perror(d);
        exit(1);
    }
}

static void save(const char *target, const char *name, const seed_t * s)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", outdir, target);
    mkdir_p(path);
    snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(s->b, 1, s->n, f) != s->n || fclose(f)) {
        perror(path);
        exit(1);
    }
}

/* ---- fuzz_pkt: mode byte, then the packet ---- */

static void pkt_hdr(seed_t * s, int type, int flags, int handler, int vcis, int am_hdr_sz,
                    unsigned credits)
{
    ibmc_pkt_hdr_t h = {.type = (uint8_t) type,.flags = (uint8_t) flags,
        .credits = (uint16_t) credits,.handler_id = (uint8_t) handler,.vcis = (uint8_t) vcis,
        .am_hdr_sz = (uint16_t) am_hdr_sz
    };
    mem(s, &h, sizeof(h));
}

static void seeds_pkt(void)
{
    const char *T = "fuzz_pkt";
    seed_t s;

    /* mode 1: rndv_info_sz = sizeof(ibmc_rndv_t) */
    s.n = 0; u8(&s, 1); pkt_hdr(&s, IBMC_PKT_AM, 0, 5, 0x12, 48, 3); fill(&s, 48 + 16, 1);
    save(T, "am-eager", &s);

    s.n = 0; u8(&s, 1); pkt_hdr(&s, IBMC_PKT_AM, IBMC_PKT_F_MSG_SZ, 5, 0x01, 48, 0);
    u64(&s, 48 + 4000); fill(&s, 48 + 100, 2);
    save(T, "am-first-of-train", &s);

    s.n = 0; u8(&s, 1); pkt_hdr(&s, IBMC_PKT_AM, IBMC_PKT_F_SEND16, 0, 0, 16, 0);
    u32(&s, 3); u32(&s, 42); u32(&s, 0x80); u8(&s, 0x10); u8(&s, 0); u8(&s, 0); u8(&s, 0);
    fill(&s, 32, 3);
    save(T, "am-send16", &s);

    s.n = 0; u8(&s, 1); pkt_hdr(&s, IBMC_PKT_AM, IBMC_PKT_F_SEND16 | IBMC_PKT_F_STARVED, 0, 0,
                                24, 7);
    u32(&s, 3); u32(&s, 42); u32(&s, 0x80); u8(&s, 0x01); u8(&s, 0); u8(&s, IBMC_SEND16_F_SREQ);
    u8(&s, 0); u64(&s, 0x7f0011223344ull); fill(&s, 8, 4);
    save(T, "am-send16-sreq", &s);

    s.n = 0; u8(&s, 1); pkt_hdr(&s, IBMC_PKT_RNDV, IBMC_PKT_F_MSG_SZ, 9, 0x21, 48, 0);
    u64(&s, 48 + (1 << 20)); fill(&s, 48, 5);
    u64(&s, 0x7f0000100000ull); u64(&s, 0xc0c0); u32(&s, 0x1234); u32(&s, 0);
    save(T, "rndv", &s);

    s.n = 0; u8(&s, 0); pkt_hdr(&s, IBMC_PKT_AM_CONT, 0, 0, 0, 0, 0); fill(&s, 200, 6);
    save(T, "am-cont", &s);

    s.n = 0; u8(&s, 0); pkt_hdr(&s, IBMC_PKT_RTU, 0, 0, 0, 0, 16);
    save(T, "rtu", &s);

    s.n = 0; u8(&s, 0); pkt_hdr(&s, IBMC_PKT_RNDV_FIN, 0, 0, 0, 0, 1); u64(&s, 0xc0c0);
    save(T, "rndv-fin", &s);

    s.n = 0; u8(&s, 0); pkt_hdr(&s, IBMC_PKT_CREDIT, IBMC_PKT_F_STARVED, 0, 0, 0, 5);
    save(T, "credit", &s);

    s.n = 0; u8(&s, 0); pkt_hdr(&s, IBMC_PKT_MCAST, 0, 0, 0, 0, 0); fill(&s, 24, 7);
    save(T, "mcast", &s);

    s.n = 0; u8(&s, 0); pkt_hdr(&s, IBMC_PKT_FIN, 0, 0, 0, 0, 0); u32(&s, 2);
    save(T, "fin", &s);

    s.n = 0; u8(&s, 0); fill(&s, 5, 8);
    save(T, "short", &s);

    s.n = 0; u8(&s, 2); pkt_hdr(&s, IBMC_PKT_RNDV, IBMC_PKT_F_MSG_SZ, 1, 0, 8, 0);
    u64(&s, 4); fill(&s, 8, 9);         /* rndv_info_sz = byte 1 (4); msg_sz < am_hdr_sz */
    save(T, "rndv-msg-sz-too-small", &s);

    /* modes 4 and 8: the writer -> parser and pack -> unpack round trips */
    s.n = 0; u8(&s, 0x0d); u8(&s, IBMC_PKT_AM); u8(&s, 0); u8(&s, 7); u8(&s, 1); u8(&s, 2);
    u8(&s, 32); u8(&s, 1); u16(&s, 500); u16(&s, 100); fill(&s, 100, 10);
    u32(&s, 1); u32(&s, 99); u32(&s, 5); u8(&s, 3); u8(&s, 0); u8(&s, 1); u64(&s, 0xabcdef);
    save(T, "build-and-pack", &s);
}

/* ---- fuzz_reasm ---- */

static void r_first(seed_t * s, unsigned msg_sz, unsigned len, unsigned tag)
{
    u8(s, 0); u16(s, msg_sz); u16(s, len); fill(s, len, tag);
}

static void r_cont(seed_t * s, unsigned len, unsigned tag)
{
    u8(s, 1); u16(s, len); fill(s, len, tag);
}

static void seeds_reasm(void)
{
    const char *T = "fuzz_reasm";
    seed_t s;

    s.n = 0; u8(&s, 0); r_first(&s, 100, 40, 1); r_cont(&s, 30, 2); r_cont(&s, 30, 3); u8(&s, 2);
    save(T, "three-packets", &s);

    s.n = 0; u8(&s, 0); r_first(&s, 64, 64, 1); u8(&s, 2); r_first(&s, 0, 0, 2); u8(&s, 2);
    save(T, "single-and-empty", &s);

    s.n = 0; u8(&s, 0); r_cont(&s, 10, 1); r_first(&s, 50, 20, 2); r_first(&s, 50, 20, 3);
    r_cont(&s, 40, 4); r_cont(&s, 30, 5); u8(&s, 3); u8(&s, 2);
    save(T, "orphan-busy-overflow", &s);

    s.n = 0; u8(&s, 0); r_first(&s, 10, 20, 1); r_first(&s, 1000, 0, 2); r_cont(&s, 0, 0);
    r_cont(&s, 999, 3); r_cont(&s, 1, 4); r_cont(&s, 0, 0); u8(&s, 2);
    save(T, "overflow-first-then-fill", &s);

    /* mode 1: am_hdr_sz, data_sz, header bytes, capacity bytes */
    s.n = 0; u8(&s, 1); u16(&s, 48); u16(&s, 16); fill(&s, 48, 1); u8(&s, 100);
    save(T, "pipe-eager", &s);

    s.n = 0; u8(&s, 1); u16(&s, 48); u16(&s, 4000); fill(&s, 48, 2);
    for (int i = 0; i < 8; i++)
        u8(&s, 200 + i * 5);
    save(T, "pipe-train", &s);

    s.n = 0; u8(&s, 1); u16(&s, 32); u16(&s, 300); fill(&s, 32, 3); u8(&s, 0);
    for (int i = 0; i < 20; i++)
        u8(&s, 3 + i);
    save(T, "pipe-header-only-first", &s);

    s.n = 0; u8(&s, 1); u16(&s, 0); u16(&s, 1); u8(&s, 0); u8(&s, 0);
    save(T, "pipe-one-byte", &s);
}

/* ---- fuzz_cm_fsm ---- */

enum { WANT = 0, REQ = 1, REP = 2, RC = 3, TIMER = 4 };
enum { Q_PEER = 0, Q_OTHER = 1, Q_ZERO = 2 };
#define AT_RETRY 0x80

static void ev(seed_t * s, int e, int q, int dt)
{
    u8(s, e | q << 3); u8(s, dt);
}

/* two-peer mode: op (bit 7 = side B), argument */
static void op2(seed_t * s, int op, int side, int arg)
{
    u8(s, op | side << 7); u8(s, arg);
}

static void seeds_cm(void)
{
    const char *T = "fuzz_cm_fsm";
    seed_t s;
    /* timing in 1/8 s: first_retry 0.25, max_retry 2, timeout 10 */
#define TIMING(mode) do { s.n = 0; u8(&s, 2); u8(&s, 16); u8(&s, 80); u8(&s, mode); } while (0)

    TIMING(0); ev(&s, WANT, 0, 0); ev(&s, REP, Q_PEER, 2); ev(&s, RC, 0, 1); ev(&s, WANT, 0, 1);
    ev(&s, REQ, Q_PEER, 1); ev(&s, REP, Q_PEER, 1);
    save(T, "initiator", &s);

    TIMING(0); ev(&s, REQ, Q_PEER, 0); ev(&s, TIMER, 0, AT_RETRY); ev(&s, REQ, Q_PEER, 1);
    ev(&s, RC, 0, 1); ev(&s, RC, 0, 1);
    save(T, "acceptor", &s);

    TIMING(0); ev(&s, WANT, 0, 0); ev(&s, REQ, Q_PEER, 1); ev(&s, REP, Q_PEER, 1);
    save(T, "simultaneous", &s);

    TIMING(0); ev(&s, WANT, 0, 0);
    for (int i = 0; i < 12; i++)
        ev(&s, TIMER, 0, AT_RETRY);
    ev(&s, REP, Q_PEER, 1);
    save(T, "retry-until-fail", &s);

    TIMING(0); ev(&s, REP, Q_PEER, 0); ev(&s, RC, 0, 0); ev(&s, REQ, Q_PEER, 1);
    ev(&s, REQ, Q_OTHER, 1); ev(&s, REP, Q_OTHER, 1); ev(&s, TIMER, 0, 0);
    ev(&s, REQ, 3, 1); u32(&s, 0xffffff);
    save(T, "stale", &s);

    /* two peers: 0/1 want, 2 deliver, 3 lose, 4 duplicate, 5 RC, 6 timer, 7 clock */
    TIMING(1); op2(&s, 0, 0, 0); op2(&s, 2, 0, 0); op2(&s, 2, 0, 0); op2(&s, 5, 1, 0);
    save(T, "pair-handshake", &s);

    TIMING(1); op2(&s, 0, 0, 0); op2(&s, 0, 1, 0); op2(&s, 2, 0, 1); op2(&s, 2, 0, 0);
    op2(&s, 2, 0, 0); op2(&s, 2, 0, 0); op2(&s, 5, 0, 0); op2(&s, 5, 1, 0);
    save(T, "pair-simultaneous", &s);

    TIMING(1); op2(&s, 0, 0, 0); op2(&s, 3, 0, 0); op2(&s, 6, 0, 0); op2(&s, 2, 0, 0);
    op2(&s, 3, 0, 0); op2(&s, 6, 1, 0); op2(&s, 4, 0, 0); op2(&s, 2, 0, 0); op2(&s, 2, 0, 0);
    save(T, "pair-losses", &s);

    TIMING(1); op2(&s, 0, 0, 0); op2(&s, 2, 0, 0); op2(&s, 7, 0, 200); op2(&s, 6, 1, 0);
    op2(&s, 2, 0, 0); op2(&s, 6, 0, 0);
    save(T, "pair-late", &s);
#undef TIMING
}

/* ---- fuzz_mcast_rx ---- */

enum { OP_PKT = 0, OP_RAW = 7, OP_POST = 8, OP_OWN = 11, OP_MISSING = 12, OP_ACK = 14 };
#define PM 16

/* payload bytes of fragment frag of a len-byte message */
static unsigned want_pm(uint64_t len, uint32_t frag, uint32_t pm)
{
    uint64_t nf = ibmc_mcast_nfrags(len, pm);
    return (unsigned) (frag + 1 < nf ? pm : len - (uint64_t) frag * pm);
}

static unsigned want(uint64_t len, uint32_t frag)
{
    return want_pm(len, frag, PM);
}

/* A packet of the posted message at next + delta (so frag = its index). */
static void m_pkt_pm(seed_t * s, uint32_t pm, int src, int delta, int ack_req, uint64_t len,
                     uint32_t frag)
{
    u8(s, OP_PKT); u8(s, ack_req << 6); u8(s, src); u8(s, (uint8_t) delta); u8(s, 0);
    fill(s, want_pm(len, frag, pm), frag);
}

static void m_pkt(seed_t * s, int src, int delta, int ack_req, uint64_t len, uint32_t frag)
{
    m_pkt_pm(s, PM, src, delta, ack_req, len, frag);
}

/* A packet of a message not yet posted, starting at next: msg_len given. */
static void m_early(seed_t * s, int src, int delta, uint64_t len, uint32_t frag)
{
    u8(s, OP_PKT); u8(s, 0); u8(s, src); u8(s, (uint8_t) delta); u16(s, (unsigned) len);
    u8(s, 0); fill(s, want(len, frag), frag + 100);
}

static void m_post(seed_t * s, unsigned len, int root)
{
    u8(s, OP_POST); u16(s, len); u8(s, root);
}

#define CONFIG(win_log2, ack_sel, skew) \
    do { s.n = 0; u8(&s, PM - 1); u8(&s, (win_log2) | (ack_sel) << 3); u8(&s, skew); } while (0)

static void seeds_mcast(void)
{
    const char *T = "fuzz_mcast_rx";
    seed_t s;

    /* window 8, ACK every 4 (sel 3), skew 1 */
    CONFIG(3, 3, 1); m_post(&s, 100, 2);
    for (uint32_t f = 0; f < 7; f++) {
        m_pkt(&s, 2, 0, f == 3, 100, f);
        u8(&s, OP_ACK); u8(&s, 1);
    }
    save(T, "in-order", &s);

    CONFIG(3, 3, 1); m_post(&s, 100, 2);
    m_pkt(&s, 2, 2, 0, 100, 2); u8(&s, OP_MISSING); u8(&s, 0 | 4 << 1);
    m_pkt(&s, 2, 5, 0, 100, 5); u8(&s, OP_MISSING); u8(&s, 0 | 4 << 1);
    m_pkt(&s, 2, 0, 0, 100, 0); m_pkt(&s, 2, 0, 0, 100, 1);      /* next 3 */
    u8(&s, OP_MISSING); u8(&s, 1 | 4 << 1);                       /* [3,+2) [6,+1) */
    m_pkt(&s, 2, 0, 0, 100, 3);
    u8(&s, OP_MISSING); u8(&s, 1 | 1 << 1);                       /* [4,+1) */
    m_pkt(&s, 2, 0, 0, 100, 4); m_pkt(&s, 2, 0, 0, 100, 6);      /* complete */
    save(T, "gaps-and-naks", &s);

    CONFIG(3, 0, 0);
    m_early(&s, 1, 1, 40, 1); m_early(&s, 1, 0, 40, 0); m_early(&s, 0, 2, 40, 2);
    m_post(&s, 40, 1); m_pkt(&s, 1, 0, 0, 40, 2);
    save(T, "held-then-post", &s);

    CONFIG(2, 1, 0); m_post(&s, 64, 0);
    m_pkt(&s, 0, 0, 0, 64, 0); m_pkt(&s, 0, -1, 0, 64, 0);     /* below next */
    m_pkt(&s, 3, 0, 0, 64, 1);                                   /* wrong source */
    u8(&s, OP_PKT); u8(&s, 2 << 4); u8(&s, 0); u8(&s, 20); u16(&s, 1000); u8(&s, 0);
    fill(&s, PM, 9);                                             /* out of window */
    m_pkt(&s, 4, 0, 0, 64, 1);                                   /* src -1 */
    m_pkt(&s, 0, 1, 0, 64, 2); m_pkt(&s, 0, 1, 0, 64, 2);      /* duplicate ahead */
    m_pkt(&s, 0, 0, 0, 64, 1); m_pkt(&s, 0, 0, 0, 64, 3);
    save(T, "dup-wrong-window", &s);

    /* payload_max 1, window 16: two own() of 2^31 - 16 bytes put next at
     * 2^32 - 32, and the next message crosses 2^32 */
    s.n = 0; u8(&s, 0); u8(&s, 4 | 2 << 3); u8(&s, 3);
    u8(&s, OP_OWN); u8(&s, 1); u32(&s, 0x7ffffff0);
    u8(&s, OP_OWN); u8(&s, 1); u32(&s, 0x7ffffff0);
    m_post(&s, 40, 3);
    for (uint32_t f = 0; f < 40; f += 2) {     /* pairs in reverse order */
        m_pkt_pm(&s, 1, 3, 1, f == 30, 40, f + 1);
        if (f == 28) {
            u8(&s, OP_MISSING); u8(&s, 0 | 7 << 1);
        }
        m_pkt_pm(&s, 1, 3, 0, 0, 40, f);
    }
    u8(&s, OP_ACK); u8(&s, 1);
    save(T, "own-and-wrap", &s);

    CONFIG(3, 0, 0);
    m_early(&s, 1, 0, 40, 0); m_post(&s, 48, 1);        /* held says 40, posted 48 */
    save(T, "mismatch-at-post", &s);

    CONFIG(3, 0, 0); m_post(&s, 32, 1);
    u8(&s, OP_RAW); u8(&s, 0); u8(&s, 30); fill(&s, 30, 1);
    u8(&s, OP_RAW); u8(&s, 7); u8(&s, 64); fill(&s, 64, 2);
    u8(&s, OP_RAW); u8(&s, 0x27); u8(&s, 48 + 16); fill(&s, 64, 3);
    save(T, "raw", &s);

    /* one spoiled field each: 5 header, 6 identity, 7 length */
    CONFIG(3, 0, 0); m_post(&s, 32, 1);
    for (int sp = 5; sp <= 7; sp++)
        for (int k = 0; k < 3; k++) {
            u8(&s, OP_PKT); u8(&s, 0); u8(&s, 1 | sp << 3); u8(&s, 0); u8(&s, 0); u8(&s, k);
            /* length spoiling with k = 0 (2) drops (adds) a payload byte */
            fill(&s, sp == 7 && k == 0 ? PM - 1 : sp == 7 && k == 2 ? PM + 1 : PM, k);
        }
    m_pkt(&s, 1, 0, 0, 32, 0); m_pkt(&s, 1, 0, 0, 32, 1);
    save(T, "spoiled", &s);

    /* window 1: every position shares one slot */
    CONFIG(0, 1, 0); m_post(&s, 40, 0);
    m_pkt(&s, 0, 1, 0, 40, 1); m_pkt(&s, 0, 0, 1, 40, 0); m_pkt(&s, 0, 0, 0, 40, 1);
    m_pkt(&s, 0, 0, 0, 40, 2); u8(&s, OP_ACK); u8(&s, 1);
    m_post(&s, 0, 0); m_post(&s, 16, 1); m_pkt(&s, 1, 0, 0, 16, 0);
    save(T, "window-one", &s);

    /* a message longer than the window */
    CONFIG(2, 2, 0); m_post(&s, 200, 2);
    for (uint32_t f = 0; f < 13; f++) {
        m_pkt(&s, 2, 0, 0, 200, f);
        if (f % 4 == 3) {
            u8(&s, OP_MISSING); u8(&s, 0 | 2 << 1); u8(&s, OP_ACK); u8(&s, 1);
        }
    }
    save(T, "longer-than-window", &s);
#undef CONFIG
}

int main(int argc, char **argv)
{
    outdir = argc > 1 ? argv[1] : "corpus";
    mkdir_p(outdir);
    seeds_pkt();
    seeds_reasm();
    seeds_cm();
    seeds_mcast();
    return 0;
}
