/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Fuzz target: splitting and reassembly of multi-packet messages
 * (ibmc_frag.h), alone and together with the packet layer (ibmc_pkt.h).
 *
 * Byte 0 bit 0 chooses the mode:
 *   0: a free sequence of ibmc_reasm_first/cont/take calls with arbitrary
 *      sizes, checked against a model of the slot;
 *   1: a message of fuzzed size is planned by ibmc_frag_next with fuzzed
 *      payload capacities, each packet is written with ibmc_pkt_put_hdr,
 *      parsed back with ibmc_pkt_parse and fed to the reassembly slot.
 *
 * Invariants: the slot never holds more than msg_sz bytes; a rejected call
 * (BUSY, ORPHAN, OVERFLOW) changes nothing and writes nothing; COMPLETE is
 * returned exactly when msg_sz bytes are in; the buffer handed back is the
 * one given and holds exactly the bytes fed in; nothing is written outside
 * [buf, buf + msg_sz) (guard bytes, and ASan); the planner covers the data
 * once, in order, within each packet's capacity, and always progresses. */

#include "fuzz_util.h"
#include "ibmc_frag.h"
#include "ibmc_pkt.h"

#define GUARD 16
#define GUARD_BYTE 0xa5
#define FRESH_BYTE 0x3c

/* A message buffer of n bytes between two guards, all bytes set. */
static char *buf_new(size_t n)
{
    char *raw = malloc(n + 2 * GUARD);
    memset(raw, GUARD_BYTE, GUARD);
    memset(raw + GUARD, FRESH_BYTE, n);
    memset(raw + GUARD + n, GUARD_BYTE, GUARD);
    return raw + GUARD;
}

static void buf_check_guards(const char *buf, size_t n)
{
    for (size_t i = 0; i < GUARD; i++) {
        CHECK((uint8_t) buf[-1 - (ptrdiff_t) i] == GUARD_BYTE, "write before the buffer");
        CHECK((uint8_t) buf[n + i] == GUARD_BYTE, "write past msg_sz (%zu)", n);
    }
}

static void buf_free(char *buf)
{
    free(buf - GUARD);
}

/* ---- mode 0: the slot against a model ---- */

typedef struct {
    int active;
    char *buf;
    size_t msg_sz, filled;
    uint8_t *expect;            /* msg_sz bytes: what was fed in */
} model_t;

static void same_slot(const ibmc_reasm_t * r, const model_t * m)
{
    CHECK(ibmc_reasm_active(r) == m->active, "active() says %d, model %d",
          ibmc_reasm_active(r), m->active);
    if (!m->active)
        return;
    CHECK(r->buf == m->buf && r->msg_sz == m->msg_sz && r->filled == m->filled,
          "slot (filled %zu of %zu) differs from model (%zu of %zu)", r->filled, r->msg_sz,
          m->filled, m->msg_sz);
    CHECK(r->filled <= r->msg_sz, "filled %zu > msg_sz %zu", r->filled, r->msg_sz);
    CHECK(memcmp(m->buf, m->expect, m->filled) == 0, "buffer differs from the bytes fed in");
    for (size_t i = m->filled; i < m->msg_sz; i++)
        CHECK((uint8_t) m->buf[i] == FRESH_BYTE, "byte %zu written before it arrived", i);
    buf_check_guards(m->buf, m->msg_sz);
}

static void run_ops(fz_t * in)
{
    ibmc_reasm_t r;
    model_t m = { 0 };
    ibmc_reasm_init(&r);
    same_slot(&r, &m);
    uint8_t payload[4096];

    for (int step = 0; step < 64 && !fz_empty(in); step++) {
        uint8_t op = fz_u8(in);
        TRACE("op %d (slot %s, %zu of %zu)", op % 4, m.active ? "busy" : "idle", m.filled,
              m.msg_sz);
        switch (op % 4) {
            case 0:{  /* first packet */
                    size_t msg_sz = fz_u16(in) % 2048;
                    size_t len = fz_u16(in) % (msg_sz + 64);
                    fz_bytes(in, payload, len);
                    char *buf = buf_new(msg_sz);
                    int rc = ibmc_reasm_first(&r, buf, msg_sz, payload, len);
                    if (m.active) {
                        CHECK(rc == IBMC_REASM_ERR_BUSY, "first packet on a busy slot: %d", rc);
                    } else if (len > msg_sz) {
                        CHECK(rc == IBMC_REASM_ERR_OVERFLOW, "%zu bytes of a %zu-byte message: %d",
                              len, msg_sz, rc);
                    } else {
                        CHECK(rc == (len == msg_sz ? IBMC_REASM_COMPLETE : IBMC_REASM_OK),
                              "first: %d for %zu of %zu", rc, len, msg_sz);
                        m.active = 1;
                        m.buf = buf;
                        m.msg_sz = msg_sz;
                        m.filled = len;
                        m.expect = malloc(msg_sz + 1);
                        memcpy(m.expect, payload, len);
                    }
                    if (rc < 0) {
                        CHECK(ibmc_reasm_strerror(rc) != NULL, "strerror");
                        /* a refused buffer is untouched */
                        for (size_t i = 0; i < msg_sz; i++)
                            CHECK((uint8_t) buf[i] == FRESH_BYTE, "refused buffer written");
                        buf_check_guards(buf, msg_sz);
                        buf_free(buf);
                    }
                    break;
                }
            case 1:{  /* continuation */
                    size_t len = fz_u16(in) % 1024;
                    fz_bytes(in, payload, len);
                    int rc = ibmc_reasm_cont(&r, payload, len);
                    if (!m.active) {
                        CHECK(rc == IBMC_REASM_ERR_ORPHAN, "continuation without a message: %d",
                              rc);
                    } else if (len > m.msg_sz - m.filled) {
                        CHECK(rc == IBMC_REASM_ERR_OVERFLOW, "%zu bytes into %zu left: %d", len,
                              m.msg_sz - m.filled, rc);
                    } else {
                        memcpy(m.expect + m.filled, payload, len);
                        m.filled += len;
                        CHECK(rc == (m.filled == m.msg_sz ? IBMC_REASM_COMPLETE : IBMC_REASM_OK),
                              "cont: %d at %zu of %zu", rc, m.filled, m.msg_sz);
                    }
                    break;
                }
            case 2:{  /* take */
                    char *buf = ibmc_reasm_take(&r);
                    if (!m.active) {
                        CHECK(buf == NULL, "take of an idle slot returned a buffer");
                    } else {
                        CHECK(buf == m.buf, "take returned another buffer");
                        CHECK(memcmp(buf, m.expect, m.filled) == 0, "message differs");
                        buf_check_guards(buf, m.msg_sz);
                        buf_free(buf);
                        free(m.expect);
                        memset(&m, 0, sizeof(m));
                    }
                    CHECK(!ibmc_reasm_active(&r), "active after take");
                    break;
                }
            default:
                break;
        }
        same_slot(&r, &m);
    }
    if (m.active) {
        buf_free(ibmc_reasm_take(&r));
        free(m.expect);
    }
}

/* ---- mode 1: planner -> packets -> parser -> reassembly ---- */

static void run_pipeline(fz_t * in)
{
    size_t am_hdr_sz = fz_u16(in) % 512;
    size_t data_sz = fz_u16(in) % 8192;
    size_t msg_sz = am_hdr_sz + data_sz;
    uint8_t *msg = malloc(msg_sz + 1);
    for (size_t i = 0; i < msg_sz; i++)
        msg[i] = (uint8_t) (i * 131 + 7 + (i >> 8));
    fz_bytes(in, msg, am_hdr_sz < 64 ? am_hdr_sz : 64);        /* some header bytes from input */

    ibmc_frag_tx_t tx;
    ibmc_reasm_t r;
    ibmc_frag_tx_init(&tx, am_hdr_sz, data_sz);
    ibmc_reasm_init(&r);
    CHECK(!ibmc_frag_tx_done(&tx), "done before the first packet");

    char *buf = buf_new(msg_sz);
    size_t sent = 0, npkts = 0;
    int complete = 0;
    ibmc_frag_t fr;
    for (;;) {
        /* the first packet must hold the AM header; later ones at least a byte */
        size_t cap = npkts == 0 ? am_hdr_sz + fz_u8(in) % 256 : 1 + (size_t) fz_u8(in) * 4;
        if (npkts > 0 && fz_empty(in))
            cap = 1024;         /* input used up: finish quickly */
        if (!ibmc_frag_next(&tx, cap, &fr))
            break;
        CHECK(!complete, "a packet planned after the message was complete");
        CHECK(fr.is_first == (npkts == 0), "is_first %d on packet %zu", fr.is_first, npkts);
        CHECK(fr.data_off == sent, "data_off %zu, sent so far %zu", fr.data_off, sent);
        CHECK(fr.data_len <= data_sz - sent, "beyond the data");
        CHECK((fr.is_first ? am_hdr_sz : 0) + fr.data_len <= cap, "packet over its capacity");
        CHECK(fr.is_first || fr.data_len > 0, "an empty continuation packet");
        CHECK(npkts <= data_sz, "more packets than data bytes");
        TRACE("packet %zu: first %d, data [%zu, +%zu) of %zu, cap %zu", npkts, fr.is_first,
              fr.data_off, fr.data_len, data_sz, cap);
        sent += fr.data_len;
        npkts++;
        int last = ibmc_frag_tx_done(&tx);
        CHECK(last == (sent == data_sz), "done() %d with %zu of %zu sent", last, sent, data_sz);

        /* write the packet */
        size_t hdr = fr.is_first ? am_hdr_sz : 0;
        ibmc_pkt_info_t info = {
            .type = fr.is_first ? IBMC_PKT_AM : IBMC_PKT_AM_CONT,.handler_id = 3,
            .am_hdr_sz = hdr,.has_msg_sz = fr.is_first && !last,.msg_sz = msg_sz
        };
        size_t hlen = ibmc_pkt_hdr_len(info.has_msg_sz);
        size_t plen = hdr + fr.data_len;
        uint8_t *pkt = malloc(hlen + plen + 1);
        CHECK(ibmc_pkt_put_hdr(pkt, &info) == hlen, "put_hdr length");
        memcpy(pkt + hlen, msg, hdr);
        memcpy(pkt + hlen + hdr, msg + am_hdr_sz + fr.data_off, fr.data_len);

        /* and receive it */
        ibmc_pkt_view_t v;
        int prc = ibmc_pkt_parse(pkt, hlen + plen, 0, &v);
        CHECK(prc == IBMC_PKT_OK, "a planned packet does not parse: %s", ibmc_pkt_strerror(prc));
        CHECK(v.plen == plen && v.payload == (const char *) pkt + hlen, "payload");
        int rc;
        if (fr.is_first) {
            CHECK(v.am_hdr_sz == am_hdr_sz && v.msg_sz == msg_sz, "first packet's sizes");
            rc = ibmc_reasm_first(&r, buf, v.msg_sz, v.payload, v.plen);
        } else {
            rc = ibmc_reasm_cont(&r, v.payload, v.plen);
        }
        free(pkt);
        CHECK(rc == (last ? IBMC_REASM_COMPLETE : IBMC_REASM_OK), "reassembly: %d (%s)", rc,
              ibmc_reasm_strerror(rc));
        CHECK(r.filled <= r.msg_sz, "filled beyond msg_sz");
        complete = rc == IBMC_REASM_COMPLETE;
    }
    CHECK(complete && ibmc_frag_tx_done(&tx), "planner stopped before the message was out");
    CHECK(sent == data_sz, "sent %zu of %zu", sent, data_sz);
    char *got = ibmc_reasm_take(&r);
    CHECK(got == buf, "take returned another buffer");
    CHECK(memcmp(got, msg, msg_sz) == 0, "the reassembled message differs from the one sent");
    buf_check_guards(got, msg_sz);
    CHECK(!ibmc_reasm_active(&r), "active after take");
    buf_free(got);
    free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size)
{
    if (size < 1)
        return 0;
    fz_t in;
    fz_init(&in, data + 1, size - 1);
    if (data[0] & 1)
        run_pipeline(&in);
    else
        run_ops(&in);
    return 0;
}
