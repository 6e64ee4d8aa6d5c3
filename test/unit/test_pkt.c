/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Host unit tests of ibmc_pkt.c: RC packet headers written by the sender
 * and checked by the receiver, and the compact MPIDIG_SEND header. */

#include <stdlib.h>
#include <string.h>
#include "ibmc_pkt.h"
#include "tap.h"
#include "rng.h"

#define PKT_MAX 4096

static void fill_pattern(char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (char) (seed * 131u + i * 7u);
}

/* Builds header + am_hdr bytes + extra + data into pkt; returns its length. */
static size_t build(char *pkt, const ibmc_pkt_info_t * info, size_t extra, size_t data)
{
    size_t h = ibmc_pkt_put_hdr(pkt, info);
    fill_pattern(pkt + h, info->am_hdr_sz + extra + data, (unsigned) info->type);
    return h + info->am_hdr_sz + extra + data;
}

int main(void)
{
    static char pkt[PKT_MAX];
    ibmc_pkt_view_t v;
    rng_t rng;

    TAP_TEST("an eager message that ends in its packet has 8 bytes of header and no size") {
        ibmc_pkt_info_t in = {.type = IBMC_PKT_AM, .handler_id = 5, .src_vci = 3, .dst_vci = 9,
            .am_hdr_sz = 48
        };
        size_t len = build(pkt, &in, 0, 100);
        TAP_EXPECT_EQ(len, 8 + 48 + 100);
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len, 24, &v), IBMC_PKT_OK);
        TAP_EXPECT_EQ(v.type, IBMC_PKT_AM);
        TAP_EXPECT_EQ(v.handler_id, 5);
        TAP_EXPECT_EQ(v.src_vci, 3);
        TAP_EXPECT_EQ(v.dst_vci, 9);
        TAP_EXPECT_EQ(v.am_hdr_sz, 48);
        TAP_EXPECT_EQ(v.msg_sz, 148);
        TAP_EXPECT_EQ(v.plen, 148);
        TAP_EXPECT(v.payload == pkt + 8);
        TAP_EXPECT_EQ(v.flags & IBMC_PKT_F_MSG_SZ, 0);
        char want[148];
        fill_pattern(want, sizeof(want), IBMC_PKT_AM);
        TAP_EXPECT(memcmp(v.payload, want, sizeof(want)) == 0);
    }

    TAP_TEST("the first packet of a longer message carries the whole size after the header") {
        ibmc_pkt_info_t in = {.type = IBMC_PKT_AM, .handler_id = 1, .am_hdr_sz = 48,
            .has_msg_sz = 1, .msg_sz = 1ull << 33
        };
        size_t len = build(pkt, &in, 0, 1000);
        TAP_EXPECT_EQ(len, 16 + 48 + 1000);
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len, 24, &v), IBMC_PKT_OK);
        TAP_EXPECT_EQ(v.msg_sz, 1ull << 33);
        TAP_EXPECT_EQ(v.plen, 1048);
        TAP_EXPECT(v.payload == pkt + 16);
        TAP_EXPECT(v.flags & IBMC_PKT_F_MSG_SZ);
    }

    TAP_TEST("the receiver reads type and flags from the first two bytes before it parses") {
        ibmc_pkt_info_t in = {.type = IBMC_PKT_CREDIT, .flags = IBMC_PKT_F_STARVED };
        TAP_EXPECT_EQ(ibmc_pkt_put_hdr(pkt, &in), 8);
        TAP_EXPECT_EQ((unsigned char) pkt[0], IBMC_PKT_CREDIT);
        TAP_EXPECT_EQ((unsigned char) pkt[1], IBMC_PKT_F_STARVED);
        TAP_EXPECT_EQ(((ibmc_pkt_hdr_t *) pkt)->type, IBMC_PKT_CREDIT);
    }

    TAP_TEST("credits written at post time come back out") {
        ibmc_pkt_info_t in = {.type = IBMC_PKT_AM_CONT };
        size_t len = build(pkt, &in, 0, 64);
        ((ibmc_pkt_hdr_t *) pkt)->credits = 65535;
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len, 24, &v), IBMC_PKT_OK);
        TAP_EXPECT_EQ(v.credits, 65535);
        TAP_EXPECT_EQ(v.plen, 64);
        TAP_EXPECT_EQ(v.am_hdr_sz, 0);
    }

    TAP_TEST("control packets are 8 bytes and parse") {
        int types[] = { IBMC_PKT_RTU, IBMC_PKT_CREDIT, IBMC_PKT_RNDV_FIN, IBMC_PKT_AM_CONT,
            IBMC_PKT_MCAST, IBMC_PKT_FIN
        };
        for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
            ibmc_pkt_info_t in = {.type = types[i] };
            size_t len = ibmc_pkt_put_hdr(pkt, &in);
            TAP_EXPECT_EQ(len, 8);
            TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len, 24, &v), IBMC_PKT_OK);
            TAP_EXPECT_EQ(v.type, types[i]);
            TAP_EXPECT_EQ(v.plen, 0);
        }
    }

    TAP_TEST("upkeep packets are the handshake's RTU, credits and finalize's barrier; "
             "every type that carries the job's messages is not") {
        for (int t = IBMC_PKT_AM; t <= IBMC_PKT_FIN; t++)
            TAP_EXPECT_EQ(ibmc_pkt_is_upkeep(t),
                          t == IBMC_PKT_RTU || t == IBMC_PKT_CREDIT || t == IBMC_PKT_FIN);
        TAP_EXPECT(!ibmc_pkt_is_upkeep(IBMC_PKT_AM) && !ibmc_pkt_is_upkeep(IBMC_PKT_RNDV) &&
                   !ibmc_pkt_is_upkeep(IBMC_PKT_MCAST) && !ibmc_pkt_is_upkeep(IBMC_PKT_RNDV_FIN));
    }

    TAP_TEST("a rendezvous announcement must carry its size and its info") {
        ibmc_pkt_info_t in = {.type = IBMC_PKT_RNDV, .handler_id = 0, .am_hdr_sz = 48,
            .has_msg_sz = 1, .msg_sz = 48 + (4u << 20)
        };
        size_t len = build(pkt, &in, 32, 0);
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len, 32, &v), IBMC_PKT_OK);
        TAP_EXPECT_EQ(v.msg_sz - v.am_hdr_sz, 4u << 20);
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len - 1, 32, &v), IBMC_PKT_ERR_AM_HDR);
        in.has_msg_sz = 0;
        len = build(pkt, &in, 32, 0);
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len, 32, &v), IBMC_PKT_ERR_FLAGS);
        in.has_msg_sz = 1;
        in.msg_sz = 47;     /* less than its own AM header */
        len = build(pkt, &in, 32, 0);
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len, 32, &v), IBMC_PKT_ERR_SIZE);
    }

    TAP_TEST("a message size MPICH cannot count (2^63 and up) is rejected") {
        ibmc_pkt_info_t in = {.type = IBMC_PKT_RNDV, .am_hdr_sz = 48, .has_msg_sz = 1,
            .msg_sz = (uint64_t) INT64_MAX
        };
        size_t len = build(pkt, &in, 32, 0);
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len, 32, &v), IBMC_PKT_OK);
        in.msg_sz = (uint64_t) INT64_MAX + 1;
        len = build(pkt, &in, 32, 0);
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len, 32, &v), IBMC_PKT_ERR_SIZE);
        in.type = IBMC_PKT_AM;
        in.msg_sz = UINT64_MAX;
        len = build(pkt, &in, 0, 0);
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len, 32, &v), IBMC_PKT_ERR_SIZE);
    }

    TAP_TEST("malformed packets are rejected with the right reason") {
        ibmc_pkt_info_t am = {.type = IBMC_PKT_AM, .am_hdr_sz = 48 };
        size_t len = build(pkt, &am, 0, 0);
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, 7, 24, &v), IBMC_PKT_ERR_SHORT);
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len - 1, 24, &v), IBMC_PKT_ERR_AM_HDR);

        am.has_msg_sz = 1;
        am.msg_sz = 1000;
        build(pkt, &am, 0, 0);
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, 12, 24, &v), IBMC_PKT_ERR_SHORT);
        /* "the message goes on" but the packet already holds all of it */
        am.msg_sz = 48 + 10;
        len = build(pkt, &am, 0, 10);
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len, 24, &v), IBMC_PKT_ERR_SIZE);

        am.has_msg_sz = 0;
        am.flags = IBMC_PKT_F_SEND16;
        len = build(pkt, &am, 0, 0);
        pkt[1] |= IBMC_PKT_F_MSG_SZ;        /* a compact header in a train */
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len + 8, 24, &v), IBMC_PKT_ERR_FLAGS);

        ibmc_pkt_info_t c = {.type = IBMC_PKT_CREDIT };
        len = ibmc_pkt_put_hdr(pkt, &c);
        pkt[1] = IBMC_PKT_F_MSG_SZ;
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len, 24, &v), IBMC_PKT_ERR_FLAGS);
        pkt[1] = (char) 0x80;
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len, 24, &v), IBMC_PKT_ERR_FLAGS);
        pkt[1] = 0;
        unsigned char bad_types[] = { 0, IBMC_PKT_FIN + 1, 255 };
        for (size_t i = 0; i < sizeof(bad_types); i++) {
            pkt[0] = (char) bad_types[i];
            TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len, 24, &v), IBMC_PKT_ERR_TYPE);
        }
    }

    TAP_TEST("every error has its own message") {
        int errs[] = { IBMC_PKT_ERR_SHORT, IBMC_PKT_ERR_TYPE, IBMC_PKT_ERR_AM_HDR,
            IBMC_PKT_ERR_SIZE, IBMC_PKT_ERR_FLAGS
        };
        size_t n = sizeof(errs) / sizeof(errs[0]);
        for (size_t i = 0; i < n; i++) {
            TAP_EXPECT(strlen(ibmc_pkt_strerror(errs[i])) > 10);
            for (size_t j = 0; j < i; j++)
                TAP_EXPECT(strcmp(ibmc_pkt_strerror(errs[i]), ibmc_pkt_strerror(errs[j])) != 0);
        }
        TAP_EXPECT_STR_HAS(ibmc_pkt_strerror(IBMC_PKT_ERR_TYPE), "type");
    }

    TAP_TEST("random headers come back field for field") {
        rng_seed(&rng, 42);
        int bad = 0;
        for (int i = 0; i < 20000 && bad < 5; i++) {
            int rndv = (int) rng_below(&rng, 2);
            ibmc_pkt_info_t in = {
                .type = rndv ? IBMC_PKT_RNDV : IBMC_PKT_AM,
                .flags = (int) rng_below(&rng, 2) ? IBMC_PKT_F_STARVED : 0,
                .handler_id = (int) rng_below(&rng, IBMC_PKT_MAX_HANDLERS),
                .src_vci = (int) rng_below(&rng, IBMC_PKT_MAX_VCIS),
                .dst_vci = (int) rng_below(&rng, IBMC_PKT_MAX_VCIS),
                .am_hdr_sz = (size_t) rng_below(&rng, 1024),
                .has_msg_sz = rndv ? 1 : (int) rng_below(&rng, 2)
            };
            size_t data = (size_t) rng_below(&rng, 1024);
            size_t extra = rndv ? 32 : 0;
            in.msg_sz = in.am_hdr_sz + (rndv ? rng_next(&rng) >> 20 : data + 1 + rng_below(&rng, 1u << 30));
            size_t len = build(pkt, &in, extra, rndv ? 0 : data);
            int rc = ibmc_pkt_parse(pkt, len, extra, &v);
            size_t hlen = ibmc_pkt_hdr_len(in.has_msg_sz);
            uint64_t want_msg = in.has_msg_sz ? in.msg_sz : len - hlen;
            if (rc != IBMC_PKT_OK || v.type != in.type || v.handler_id != in.handler_id ||
                v.src_vci != in.src_vci || v.dst_vci != in.dst_vci ||
                v.am_hdr_sz != in.am_hdr_sz || v.msg_sz != want_msg ||
                v.payload != pkt + hlen || v.plen != len - hlen ||
                (v.flags & IBMC_PKT_F_STARVED) != in.flags) {
                tap_diag("  case %d: rc %d type %d handler %d am_hdr %zu msg %llu", i, rc,
                         in.type, in.handler_id, in.am_hdr_sz, (unsigned long long) in.msg_sz);
                bad++;
            }
        }
        TAP_EXPECT_EQ(bad, 0);
    }

    TAP_TEST("compact send headers: 16 bytes, 24 with the request, every field kept") {
        rng_seed(&rng, 7);
        char buf[32];
        int bad = 0;
        for (int i = 0; i < 20000 && bad < 5; i++) {
            ibmc_send16_fields_t in = {
                .src_rank = (int32_t) rng_next(&rng),
                .tag = (int32_t) rng_next(&rng),
                .context_id = (uint32_t) rng_next(&rng),
                .flags = (int) rng_below(&rng, 0x80),
                .error_bits = (int) rng_below(&rng, 0x100),
                .has_sreq = (int) rng_below(&rng, 2)
            }, out;
            in.sreq = in.has_sreq ? rng_next(&rng) : 0;
            size_t n = ibmc_send16_pack(buf, &in);
            memset(&out, 0xa5, sizeof(out));
            size_t m = ibmc_send16_unpack(buf, n, &out);
            if (!ibmc_send16_fits(&in) || n != (in.has_sreq ? 24u : 16u) || m != n ||
                out.src_rank != in.src_rank || out.tag != in.tag ||
                out.context_id != in.context_id || out.flags != in.flags ||
                out.error_bits != in.error_bits || out.has_sreq != in.has_sreq ||
                out.sreq != in.sreq) {
                tap_diag("  case %d: packed %zu unpacked %zu", i, n, m);
                bad++;
            }
            if (ibmc_send16_unpack(buf, n - 1, &out) != 0) {
                tap_diag("  case %d: a truncated header was accepted", i);
                bad++;
            }
        }
        TAP_EXPECT_EQ(bad, 0);
    }

    TAP_TEST("fields outside the compact form are refused") {
        ibmc_send16_fields_t f = {.flags = 0x7f, .error_bits = 0xff };
        TAP_EXPECT(ibmc_send16_fits(&f));
        f.flags = 0x80;
        TAP_EXPECT(!ibmc_send16_fits(&f));
        f.flags = -1;
        TAP_EXPECT(!ibmc_send16_fits(&f));
        f.flags = 0;
        f.error_bits = 0x100;
        TAP_EXPECT(!ibmc_send16_fits(&f));
        f.error_bits = -1;
        TAP_EXPECT(!ibmc_send16_fits(&f));
    }

    TAP_TEST("a compact eager send: 24 bytes of headers, data bit-exact behind them") {
        ibmc_send16_fields_t f = {.src_rank = 3, .tag = 77, .context_id = 0x10004,
            .flags = 1, .error_bits = 0, .has_sreq = 1, .sreq = 0xdeadbeefcafef00dull
        }, g;
        char data[40];
        fill_pattern(data, sizeof(data), 99);
        ibmc_pkt_info_t in = {.type = IBMC_PKT_AM, .flags = IBMC_PKT_F_SEND16, .handler_id = 0,
            .am_hdr_sz = ibmc_send16_len(1)
        };
        size_t h = ibmc_pkt_put_hdr(pkt, &in);
        size_t c = ibmc_send16_pack(pkt + h, &f);
        memcpy(pkt + h + c, data, sizeof(data));
        size_t len = h + c + sizeof(data);
        TAP_EXPECT_EQ(h, 8);
        TAP_EXPECT_EQ(c, 24);
        TAP_EXPECT_EQ(ibmc_pkt_parse(pkt, len, 24, &v), IBMC_PKT_OK);
        TAP_EXPECT(v.flags & IBMC_PKT_F_SEND16);
        size_t used = ibmc_send16_unpack(v.payload, v.plen, &g);
        TAP_EXPECT_EQ(used, v.am_hdr_sz);
        TAP_EXPECT_EQ(v.plen - used, sizeof(data));
        TAP_EXPECT(memcmp(v.payload + used, data, sizeof(data)) == 0);
        TAP_EXPECT_EQ(g.tag, 77);
        TAP_EXPECT_EQ(g.context_id, 0x10004);
        TAP_EXPECT_EQ(g.sreq, 0xdeadbeefcafef00dull);

        /* without MPI_Ssend's request the whole packet is 8 + 16 + data */
        f.flags = 0;
        f.has_sreq = 0;
        TAP_EXPECT_EQ(ibmc_send16_pack(pkt + h, &f), 16);
    }

    return tap_done();
}
