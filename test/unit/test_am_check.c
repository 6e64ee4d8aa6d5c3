/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Host unit tests of ibmc_am_check.c: packets built and parsed as the wire
 * carries them, then held to rules shaped like MPICH 4.0.2's (64 handler
 * slots with holes, MPIDIG_SEND at 0 reading a 48-byte header, one VCI).
 * Each case is a packet a broken or hostile peer could send. */

#include <stdlib.h>
#include <string.h>
#include "ibmc_am_check.h"
#include "tap.h"
#include "rng.h"

#define PKT_MAX 4096
#define RNDV_INFO 32
#define SEND 0                  /* MPIDIG_SEND's id in MPICH 4.0.2 */
#define CTS 1                   /* registered, reads 24 bytes */
#define HOLE 7                  /* a slot nobody registered */
#define DYN 60                  /* registered at run time: no fixed header */

static void rules_like_mpich(ibmc_am_rules_t * r)
{
    memset(r, 0, sizeof(*r));
    r->n_handlers = 64;
    r->n_vcis = 1;
    r->rndv_handler = SEND;
    for (int i = 0; i < 40; i++)
        r->registered[i] = i != HOLE;
    r->registered[DYN] = 1;
    r->hdr_min[SEND] = 48;
    r->hdr_min[CTS] = 24;
    for (int i = 2; i < 40; i++)
        r->hdr_min[i] = 16;
}

/* Build and parse a packet; the view is what the netmod would check. */
static int view_of(char *pkt, const ibmc_pkt_info_t * in, ibmc_pkt_view_t * v)
{
    size_t len = ibmc_pkt_put_hdr(pkt, in);
    size_t body = in->am_hdr_sz + (in->type == IBMC_PKT_RNDV ? RNDV_INFO : 8);
    memset(pkt + len, 0x5a, body);
    return ibmc_pkt_parse(pkt, len + body, RNDV_INFO, v);
}

static int check(const ibmc_pkt_info_t * in, const ibmc_am_rules_t * r)
{
    static char pkt[PKT_MAX];
    ibmc_pkt_view_t v;
    if (view_of(pkt, in, &v) != IBMC_PKT_OK)
        return 99;      /* the parser refused it: not what these tests are about */
    return ibmc_am_check(&v, r);
}

int main(void)
{
    ibmc_am_rules_t r;
    rules_like_mpich(&r);

    TAP_TEST("an eager send with its full header is accepted") {
        ibmc_pkt_info_t in = {.type = IBMC_PKT_AM, .handler_id = SEND, .am_hdr_sz = 48 };
        TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_OK);
    }

    TAP_TEST("a handler slot nobody registered is refused") {
        ibmc_pkt_info_t in = {.type = IBMC_PKT_AM, .handler_id = HOLE, .am_hdr_sz = 16 };
        TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_ERR_HANDLER);
    }

    TAP_TEST("a handler id past MPICH's table is refused, however large") {
        int ids[] = { 40, 63, 64, 128, 255 };
        for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
            ibmc_pkt_info_t in = {.type = IBMC_PKT_AM, .handler_id = ids[i], .am_hdr_sz = 48 };
            TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_ERR_HANDLER);
        }
    }

    TAP_TEST("a header one byte shorter than its handler reads is refused") {
        ibmc_pkt_info_t in = {.type = IBMC_PKT_AM, .handler_id = SEND, .am_hdr_sz = 47 };
        TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_ERR_HDR);
        in.handler_id = CTS;
        in.am_hdr_sz = 23;
        TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_ERR_HDR);
        in.am_hdr_sz = 24;
        TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_OK);
        in.am_hdr_sz = 0;
        TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_ERR_HDR);
    }

    TAP_TEST("a run-time handler takes any header size") {
        ibmc_pkt_info_t in = {.type = IBMC_PKT_AM, .handler_id = DYN, .am_hdr_sz = 0 };
        TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_OK);
    }

    TAP_TEST("the compact send header is left to its own unpacking") {
        ibmc_pkt_info_t in = {.type = IBMC_PKT_AM, .flags = IBMC_PKT_F_SEND16,
            .handler_id = SEND, .am_hdr_sz = 16
        };
        TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_OK);
    }

    TAP_TEST("a VCI this process does not have is refused") {
        ibmc_pkt_info_t in = {.type = IBMC_PKT_AM, .handler_id = SEND, .am_hdr_sz = 48,
            .dst_vci = 1
        };
        TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_ERR_VCI);
        in.dst_vci = IBMC_PKT_MAX_VCIS - 1;
        TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_ERR_VCI);
        /* the sender's VCI is the sender's: any the wire can name will do */
        in.dst_vci = 0;
        in.src_vci = IBMC_PKT_MAX_VCIS - 1;
        TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_OK);
        r.n_vcis = 4;
        in.dst_vci = 3;
        TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_OK);
        rules_like_mpich(&r);
    }

    TAP_TEST("a rendezvous carries only point-to-point sends") {
        ibmc_pkt_info_t in = {.type = IBMC_PKT_RNDV, .handler_id = SEND, .am_hdr_sz = 48,
            .has_msg_sz = 1, .msg_sz = 48 + (1u << 20)
        };
        TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_OK);
        in.handler_id = CTS;
        TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_ERR_RNDV);
        in.handler_id = DYN;
        TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_ERR_RNDV);
        in.handler_id = HOLE;
        TAP_EXPECT_EQ(check(&in, &r), IBMC_AM_ERR_HANDLER);
    }

    TAP_TEST("every refusal has its own sentence") {
        int codes[] = { IBMC_AM_ERR_HANDLER, IBMC_AM_ERR_VCI, IBMC_AM_ERR_HDR, IBMC_AM_ERR_RNDV };
        for (size_t i = 0; i < 4; i++)
            for (size_t j = i + 1; j < 4; j++)
                TAP_EXPECT(strcmp(ibmc_am_strerror(codes[i]), ibmc_am_strerror(codes[j])) != 0);
        TAP_EXPECT(strstr(ibmc_am_strerror(IBMC_AM_ERR_RNDV), "rendezvous") != NULL);
    }

    TAP_TEST("random packets: accepted exactly when every rule holds") {
        static char pkt[PKT_MAX];
        rng_t rng;
        rng_seed(&rng, 17);
        int accepted = 0, refused = 0;
        for (int i = 0; i < 100000; i++) {
            ibmc_pkt_info_t in = {
                .type = rng_below(&rng, 2) ? IBMC_PKT_AM : IBMC_PKT_RNDV,
                .handler_id = (int) rng_below(&rng, IBMC_PKT_MAX_HANDLERS),
                .src_vci = (int) rng_below(&rng, IBMC_PKT_MAX_VCIS),
                .dst_vci = rng_below(&rng, 4) ? 0 : (int) rng_below(&rng, IBMC_PKT_MAX_VCIS),
                .am_hdr_sz = rng_below(&rng, 64),
            };
            if (in.type == IBMC_PKT_RNDV) {
                in.has_msg_sz = 1;
                in.msg_sz = in.am_hdr_sz + 100000;
            }
            ibmc_pkt_view_t v;
            if (view_of(pkt, &in, &v) != IBMC_PKT_OK)
                continue;
            int h = in.handler_id;
            int ok = h < 64 && r.registered[h] && in.dst_vci == 0 &&
                in.am_hdr_sz >= r.hdr_min[h] && (in.type != IBMC_PKT_RNDV || h == SEND);
            int rc = ibmc_am_check(&v, &r);
            if ((rc == IBMC_AM_OK) != ok) {
                tap_diag("type %d handler %d vci %d hdr %zu: check %d, expected %s",
                         in.type, h, in.dst_vci, in.am_hdr_sz, rc, ok ? "ok" : "refusal");
                TAP_EXPECT(0);
                break;
            }
            ok ? accepted++ : refused++;
        }
        /* both outcomes were exercised many times */
        TAP_EXPECT(accepted > 1000);
        TAP_EXPECT(refused > 1000);
    }

    return tap_done();
}
