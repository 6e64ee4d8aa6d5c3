/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Host unit tests of ibmc_frag.c: planning the packets of an active message
 * and reassembling them. */

#include <stdlib.h>
#include <string.h>
#include "ibmc_frag.h"
#include "tap.h"
#include "rng.h"

#define MiB ((size_t) 1 << 20)

/* The number of packets a message must take: the first packet holds the AM
 * header and cap - hdr data bytes, every continuation holds cap bytes. */
static size_t expected_packets(size_t hdr, size_t data, size_t cap)
{
    size_t room0 = cap - hdr;
    if (data <= room0)
        return 1;
    return 1 + (data - room0 + cap - 1) / cap;
}

/* Plans one message and checks every packet.  Returns the number of failed
 * checks (each also printed as a diagnostic). */
static int check_plan(size_t hdr, size_t data, size_t cap)
{
    ibmc_frag_tx_t tx;
    ibmc_frag_t f;
    size_t want = expected_packets(hdr, data, cap);
    size_t n = 0, sum = 0, next_off = 0;
    int bad = 0;

    ibmc_frag_tx_init(&tx, hdr, data);
    if (ibmc_frag_tx_done(&tx)) {
        tap_diag("  hdr=%zu data=%zu cap=%zu: done before the first packet", hdr, data, cap);
        bad++;
    }
    /* Bounded: a planner that never finishes must not hang the test. */
    while (n <= want + 1) {
        memset(&f, 0xa5, sizeof(f));
        if (!ibmc_frag_next(&tx, cap, &f))
            break;
        size_t room = n == 0 ? cap - hdr : cap;
        if (f.is_first != (n == 0)) {
            tap_diag("  hdr=%zu data=%zu cap=%zu pkt %zu: is_first=%d", hdr, data, cap, n,
                     f.is_first);
            bad++;
        }
        if (f.data_off != next_off) {
            tap_diag("  hdr=%zu data=%zu cap=%zu pkt %zu: data_off=%zu, expected %zu", hdr, data,
                     cap, n, f.data_off, next_off);
            bad++;
        }
        if (f.data_len > room) {
            tap_diag("  hdr=%zu data=%zu cap=%zu pkt %zu: data_len=%zu > room %zu", hdr, data,
                     cap, n, f.data_len, room);
            bad++;
        }
        if (n == 0 && hdr + f.data_len > cap) {
            tap_diag("  hdr=%zu data=%zu cap=%zu: am_hdr + first data = %zu > cap", hdr, data,
                     cap, hdr + f.data_len);
            bad++;
        }
        if (n > 0 && f.data_len == 0) {
            tap_diag("  hdr=%zu data=%zu cap=%zu pkt %zu: empty continuation", hdr, data, cap, n);
            bad++;
        }
        next_off = f.data_off + f.data_len;
        sum += f.data_len;
        n++;
    }
    if (n != want) {
        tap_diag("  hdr=%zu data=%zu cap=%zu: %zu packets, expected %zu", hdr, data, cap, n, want);
        bad++;
    }
    if (sum != data) {
        tap_diag("  hdr=%zu data=%zu cap=%zu: data_len sum %zu", hdr, data, cap, sum);
        bad++;
    }
    if (!ibmc_frag_tx_done(&tx)) {
        tap_diag("  hdr=%zu data=%zu cap=%zu: not done after the last packet", hdr, data, cap);
        bad++;
    }
    if (ibmc_frag_next(&tx, cap, &f)) {
        tap_diag("  hdr=%zu data=%zu cap=%zu: a packet after done", hdr, data, cap);
        bad++;
    }
    return bad;
}

/* Fragments a random message, builds the real packet payloads, reassembles
 * them and compares.  Returns the number of failed checks. */
static int round_trip(rng_t * rng, size_t hdr, size_t data, size_t cap)
{
    size_t msg_sz = hdr + data;
    unsigned char *msg = malloc(msg_sz ? msg_sz : 1);
    unsigned char *pkt = malloc(cap ? cap : 1);
    char *buf = malloc(msg_sz ? msg_sz : 1);
    ibmc_frag_tx_t tx;
    ibmc_frag_t f;
    ibmc_reasm_t r;
    int bad = 0, rc = IBMC_REASM_OK;
    size_t n = 0, want = expected_packets(hdr, data, cap);

    for (size_t i = 0; i < msg_sz; i += 8) {
        uint64_t v = rng_next(rng);
        memcpy(msg + i, &v, msg_sz - i < 8 ? msg_sz - i : 8);
    }
    memset(buf, 0, msg_sz ? msg_sz : 1);

    ibmc_reasm_init(&r);
    ibmc_frag_tx_init(&tx, hdr, data);
    while (n <= want + 1 && ibmc_frag_next(&tx, cap, &f)) {
        size_t len;
        if (rc != IBMC_REASM_OK) {
            tap_diag("  hdr=%zu data=%zu cap=%zu: packet %zu after reassembly returned %d", hdr,
                     data, cap, n, rc);
            bad++;
            break;
        }
        if (f.is_first) {
            memcpy(pkt, msg, hdr);
            memcpy(pkt + hdr, msg + hdr + f.data_off, f.data_len);
            len = hdr + f.data_len;
            rc = ibmc_reasm_first(&r, buf, msg_sz, pkt, len);
        } else {
            memcpy(pkt, msg + hdr + f.data_off, f.data_len);
            len = f.data_len;
            rc = ibmc_reasm_cont(&r, pkt, len);
        }
        /* scribble over the packet buffer, as the NIC would reuse it */
        memset(pkt, 0x5a, cap);
        n++;
        if (rc < 0) {
            tap_diag("  hdr=%zu data=%zu cap=%zu: packet %zu: %s", hdr, data, cap, n - 1,
                     ibmc_reasm_strerror(rc));
            bad++;
            break;
        }
        if (rc == IBMC_REASM_OK && !ibmc_reasm_active(&r)) {
            tap_diag("  hdr=%zu data=%zu cap=%zu: slot inactive mid-message", hdr, data, cap);
            bad++;
        }
    }
    if (rc != IBMC_REASM_COMPLETE) {
        tap_diag("  hdr=%zu data=%zu cap=%zu: ended with %d, not COMPLETE", hdr, data, cap, rc);
        bad++;
    } else {
        char *got = ibmc_reasm_take(&r);
        if (got != buf) {
            tap_diag("  hdr=%zu data=%zu cap=%zu: take returned another buffer", hdr, data, cap);
            bad++;
        } else if (msg_sz && memcmp(got, msg, msg_sz) != 0) {
            tap_diag("  hdr=%zu data=%zu cap=%zu: reassembled bytes differ", hdr, data, cap);
            bad++;
        }
        if (ibmc_reasm_active(&r)) {
            tap_diag("  hdr=%zu data=%zu cap=%zu: slot still active after take", hdr, data, cap);
            bad++;
        }
    }
    free(msg);
    free(pkt);
    free(buf);
    return bad;
}

static const size_t caps[] = { 1, 2, 16, 64, 100, 4096, 4096 - 24, 8192, 65536 };
static const size_t hdrs[] = { 0, 1, 8, 16, 48, 63, 64, 100, 4096 };

/* data sizes around the interesting boundaries of (hdr, cap) */
static size_t data_sizes(size_t hdr, size_t cap, size_t *out)
{
    size_t room0 = cap - hdr, k = 0;
    out[k++] = 0;
    out[k++] = 1;
    if (room0 > 0)
        out[k++] = room0 - 1;
    out[k++] = room0;           /* exact fit in the first packet */
    out[k++] = room0 + 1;       /* one byte over */
    out[k++] = room0 + cap - 1;
    out[k++] = room0 + cap;     /* exactly two full packets */
    out[k++] = room0 + cap + 1;
    out[k++] = room0 + 7 * cap; /* exactly eight full packets */
    out[k++] = room0 + 7 * cap + 1;
    if (cap >= 16) {            /* 4 MiB takes a while with 1-byte packets */
        out[k++] = 4 * MiB - 1;
        out[k++] = 4 * MiB;
        out[k++] = 4 * MiB + 1;
    }
    return k;
}

int main(void)
{
    rng_t rng;
    rng_seed(&rng, 12345);

    TAP_TEST("expected packet-count formula sanity") {
        TAP_EXPECT_EQ(expected_packets(40, 0, 100), 1);
        TAP_EXPECT_EQ(expected_packets(40, 60, 100), 1);
        TAP_EXPECT_EQ(expected_packets(40, 61, 100), 2);
        TAP_EXPECT_EQ(expected_packets(40, 160, 100), 2);
        TAP_EXPECT_EQ(expected_packets(40, 161, 100), 3);
        TAP_EXPECT_EQ(expected_packets(100, 0, 100), 1);
        TAP_EXPECT_EQ(expected_packets(100, 1, 100), 2);
    }

    TAP_TEST("plan: data_sz 0 is one first packet with no data") {
        ibmc_frag_tx_t tx;
        ibmc_frag_t f;
        ibmc_frag_tx_init(&tx, 32, 0);
        TAP_EXPECT(!ibmc_frag_tx_done(&tx));
        TAP_EXPECT(ibmc_frag_next(&tx, 4096, &f) == 1);
        TAP_EXPECT(f.is_first == 1);
        TAP_EXPECT_EQ(f.data_off, 0);
        TAP_EXPECT_EQ(f.data_len, 0);
        TAP_EXPECT(ibmc_frag_tx_done(&tx));
        TAP_EXPECT(ibmc_frag_next(&tx, 4096, &f) == 0);
    }

    TAP_TEST("plan: exact fit and one byte over") {
        ibmc_frag_tx_t tx;
        ibmc_frag_t f;
        ibmc_frag_tx_init(&tx, 24, 1000);       /* 24 + 1000 == 1024 */
        TAP_EXPECT(ibmc_frag_next(&tx, 1024, &f) == 1);
        TAP_EXPECT(f.is_first && f.data_off == 0 && f.data_len == 1000);
        TAP_EXPECT(ibmc_frag_next(&tx, 1024, &f) == 0);

        ibmc_frag_tx_init(&tx, 24, 1001);
        TAP_EXPECT(ibmc_frag_next(&tx, 1024, &f) == 1);
        TAP_EXPECT(f.is_first && f.data_off == 0 && f.data_len == 1000);
        TAP_EXPECT(!ibmc_frag_tx_done(&tx));
        TAP_EXPECT(ibmc_frag_next(&tx, 1024, &f) == 1);
        TAP_EXPECT(!f.is_first && f.data_off == 1000 && f.data_len == 1);
        TAP_EXPECT(ibmc_frag_tx_done(&tx));
        TAP_EXPECT(ibmc_frag_next(&tx, 1024, &f) == 0);
    }

    TAP_TEST("plan: AM header filling the whole first packet") {
        ibmc_frag_tx_t tx;
        ibmc_frag_t f;
        ibmc_frag_tx_init(&tx, 64, 10);
        TAP_EXPECT(ibmc_frag_next(&tx, 64, &f) == 1);
        TAP_EXPECT(f.is_first && f.data_len == 0);
        TAP_EXPECT(ibmc_frag_next(&tx, 64, &f) == 1);
        TAP_EXPECT(!f.is_first && f.data_off == 0 && f.data_len == 10);
        TAP_EXPECT(ibmc_frag_next(&tx, 64, &f) == 0);
    }

    TAP_TEST("plan: 4 MiB in 4 KiB packets") {
        TAP_EXPECT(check_plan(48, 4 * MiB, 4096) == 0);
        TAP_EXPECT_EQ(expected_packets(48, 4 * MiB, 4096), 1025);
    }

    TAP_TEST("plan: all (am_hdr_sz, data_sz, payload_cap) combinations") {
        size_t combos = 0;
        for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
            for (size_t h = 0; h < sizeof(hdrs) / sizeof(hdrs[0]); h++) {
                size_t ds[16];
                if (hdrs[h] > caps[c])
                    continue;   /* the caller guarantees am_hdr_sz <= payload_cap */
                size_t nd = data_sizes(hdrs[h], caps[c], ds);
                for (size_t d = 0; d < nd; d++) {
                    if (check_plan(hdrs[h], ds[d], caps[c]))
                        TAP_FAIL("plan checks failed (see above)");
                    combos++;
                }
            }
        }
        tap_diag("  %zu combinations planned", combos);
        TAP_EXPECT(combos > 300);
    }

    TAP_TEST("round trip: boundary combinations, byte-exact") {
        for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
            for (size_t h = 0; h < sizeof(hdrs) / sizeof(hdrs[0]); h++) {
                size_t ds[16];
                if (hdrs[h] > caps[c] || caps[c] < 16)
                    continue;
                size_t nd = data_sizes(hdrs[h], caps[c], ds);
                for (size_t d = 0; d < nd; d++) {
                    /* the 4 MiB sizes with two header sizes per cap are enough */
                    if (ds[d] > MiB && hdrs[h] != 48 && hdrs[h] != 63)
                        continue;
                    if (round_trip(&rng, hdrs[h], ds[d], caps[c]))
                        TAP_FAIL("round trip failed (see above)");
                }
            }
        }
        /* tiny packets, small messages */
        TAP_EXPECT(round_trip(&rng, 1, 300, 1) == 0);
        TAP_EXPECT(round_trip(&rng, 2, 301, 2) == 0);
        TAP_EXPECT(round_trip(&rng, 0, 0, 1) == 0);
    }

    TAP_TEST("round trip: 500 random messages, byte-exact") {
        for (int i = 0; i < 500; i++) {
            size_t cap = 16 + rng_below(&rng, 9000);
            size_t hdr = rng_below(&rng, cap + 1);
            size_t data = rng_below(&rng, 4) == 0 ? rng_below(&rng, 300000) : rng_below(&rng, 3 * cap);
            if (round_trip(&rng, hdr, data, cap)) {
                tap_diag("  (random message %d)", i);
                TAP_FAIL("round trip failed");
            }
        }
    }

    TAP_TEST("reasm: the slot is reusable for consecutive messages") {
        ibmc_reasm_t r;
        char a[10], b[4];
        ibmc_reasm_init(&r);
        TAP_EXPECT(!ibmc_reasm_active(&r));
        TAP_EXPECT(ibmc_reasm_first(&r, a, 10, "01234", 5) == IBMC_REASM_OK);
        TAP_EXPECT(ibmc_reasm_active(&r));
        TAP_EXPECT(ibmc_reasm_cont(&r, "56789", 5) == IBMC_REASM_COMPLETE);
        TAP_EXPECT(ibmc_reasm_take(&r) == a);
        TAP_EXPECT(memcmp(a, "0123456789", 10) == 0);
        TAP_EXPECT(!ibmc_reasm_active(&r));
        TAP_EXPECT(ibmc_reasm_first(&r, b, 4, "wxyz", 4) == IBMC_REASM_COMPLETE);
        TAP_EXPECT(ibmc_reasm_take(&r) == b);
        TAP_EXPECT(memcmp(b, "wxyz", 4) == 0);
    }

    TAP_TEST("reasm error: continuation without a first packet -> ORPHAN") {
        ibmc_reasm_t r;
        ibmc_reasm_init(&r);
        TAP_EXPECT_EQ(ibmc_reasm_cont(&r, "abc", 3), (unsigned long long) IBMC_REASM_ERR_ORPHAN);
        TAP_EXPECT(!ibmc_reasm_active(&r));
        /* also after a completed message was taken */
        char buf[3];
        TAP_EXPECT(ibmc_reasm_first(&r, buf, 3, "abc", 3) == IBMC_REASM_COMPLETE);
        ibmc_reasm_take(&r);
        TAP_EXPECT_EQ(ibmc_reasm_cont(&r, "d", 1), (unsigned long long) IBMC_REASM_ERR_ORPHAN);
    }

    TAP_TEST("reasm error: first packet while a message is active -> BUSY") {
        ibmc_reasm_t r;
        char a[8], b[8];
        ibmc_reasm_init(&r);
        TAP_EXPECT(ibmc_reasm_first(&r, a, 8, "abcd", 4) == IBMC_REASM_OK);
        memset(b, '-', sizeof(b));
        TAP_EXPECT_EQ(ibmc_reasm_first(&r, b, 8, "WXYZ", 4), (unsigned long long) IBMC_REASM_ERR_BUSY);
        /* the message in progress is untouched and can finish */
        TAP_EXPECT(memcmp(b, "--------", 8) == 0);
        TAP_EXPECT(ibmc_reasm_cont(&r, "efgh", 4) == IBMC_REASM_COMPLETE);
        TAP_EXPECT(ibmc_reasm_take(&r) == a);
        TAP_EXPECT(memcmp(a, "abcdefgh", 8) == 0);
    }

    TAP_TEST("reasm error: more bytes than announced -> OVERFLOW (first)") {
        ibmc_reasm_t r;
        char *buf = malloc(4);  /* exact size: ASan catches a write past it */
        ibmc_reasm_init(&r);
        TAP_EXPECT_EQ(ibmc_reasm_first(&r, buf, 4, "abcde", 5),
                      (unsigned long long) IBMC_REASM_ERR_OVERFLOW);
        TAP_EXPECT(!ibmc_reasm_active(&r));
        /* the slot is still usable */
        TAP_EXPECT(ibmc_reasm_first(&r, buf, 4, "abcd", 4) == IBMC_REASM_COMPLETE);
        TAP_EXPECT(ibmc_reasm_take(&r) == buf);
        free(buf);
    }

    TAP_TEST("reasm error: more bytes than announced -> OVERFLOW (continuation)") {
        ibmc_reasm_t r;
        char *buf = malloc(6);
        ibmc_reasm_init(&r);
        TAP_EXPECT(ibmc_reasm_first(&r, buf, 6, "ab", 2) == IBMC_REASM_OK);
        TAP_EXPECT_EQ(ibmc_reasm_cont(&r, "cdefg", 5), (unsigned long long) IBMC_REASM_ERR_OVERFLOW);
        TAP_EXPECT(ibmc_reasm_active(&r));
        TAP_EXPECT_EQ(r.filled, 2);
        TAP_EXPECT(ibmc_reasm_cont(&r, "cd", 2) == IBMC_REASM_OK);
        TAP_EXPECT_EQ(ibmc_reasm_cont(&r, "efg", 3), (unsigned long long) IBMC_REASM_ERR_OVERFLOW);
        TAP_EXPECT(ibmc_reasm_cont(&r, "ef", 2) == IBMC_REASM_COMPLETE);
        TAP_EXPECT(memcmp(ibmc_reasm_take(&r), "abcdef", 6) == 0);
        free(buf);
    }

    TAP_TEST("reasm_strerror: a distinct real message for each error") {
        const char *busy = ibmc_reasm_strerror(IBMC_REASM_ERR_BUSY);
        const char *orphan = ibmc_reasm_strerror(IBMC_REASM_ERR_ORPHAN);
        const char *over = ibmc_reasm_strerror(IBMC_REASM_ERR_OVERFLOW);
        TAP_EXPECT(busy && orphan && over);
        if (busy && orphan && over) {
            TAP_EXPECT(strcmp(busy, "no error") != 0 && busy[0]);
            TAP_EXPECT(strcmp(orphan, "no error") != 0 && orphan[0]);
            TAP_EXPECT(strcmp(over, "no error") != 0 && over[0]);
            TAP_EXPECT(strcmp(busy, orphan) != 0);
            TAP_EXPECT(strcmp(busy, over) != 0);
            TAP_EXPECT(strcmp(orphan, over) != 0);
        }
        TAP_EXPECT(strcmp(ibmc_reasm_strerror(IBMC_REASM_OK), "no error") == 0);
    }

    return tap_done();
}
