/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Unit tests of ibmc_cm_msg: a connection datagram is believed only if it
 * carries the job's key and comes from the UD QP and port of the rank it
 * names.  Forged REQ/REP from the wrong QP, LID, GID or IPv4 address, another
 * job's datagrams, truncated and garbage datagrams are all refused. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_cm_msg.h"
#include "tap.h"
#include "rng.h"

#define KEY 0x1234567890abcdefull

static ibmc_cm_msg_t good_msg(uint32_t type, uint32_t rank)
{
    ibmc_cm_msg_t m;
    memset(&m, 0, sizeof(m));
    m.magic = IBMC_CM_MAGIC;
    m.type = type;
    m.src_rank = rank;
    m.rc_qpn = 77;
    m.job_key = KEY;
    m.rc_psn = 0x123456;
    m.nonce = 42;
    return m;
}

static ibmc_card_t card_ib(void)
{
    ibmc_card_t c;
    memset(&c, 0, sizeof(c));
    c.lid = 9;
    c.ud_qpn = 0x111;
    c.link_layer = IBMC_CM_LINK_IB;
    for (int i = 0; i < 16; i++)
        c.gid[i] = (uint8_t) (0xfe + i);
    return c;
}

/* a RoCE v2 card of 10.0.2.15 */
static ibmc_card_t card_roce4(void)
{
    ibmc_card_t c;
    memset(&c, 0, sizeof(c));
    c.ud_qpn = 0x222;
    c.link_layer = IBMC_CM_LINK_ETH;
    c.gid[10] = c.gid[11] = 0xff;
    c.gid[12] = 10;
    c.gid[13] = 0;
    c.gid[14] = 2;
    c.gid[15] = 15;
    return c;
}

int main(void)
{
    ibmc_cm_msg_t m, out;

    TAP_TEST("a well-formed REQ and REP of the job parse") {
        m = good_msg(IBMC_CM_MSG_REQ, 3);
        TAP_EXPECT_EQ(ibmc_cm_msg_parse(&m, sizeof(m), KEY, 4, &out), IBMC_CM_MSG_OK);
        TAP_EXPECT_EQ(out.rc_qpn, 77);
        TAP_EXPECT_EQ(out.rc_psn, 0x123456);
        m = good_msg(IBMC_CM_MSG_REP, 0);
        TAP_EXPECT_EQ(ibmc_cm_msg_parse(&m, sizeof(m), KEY, 4, &out), IBMC_CM_MSG_OK);
    }

    TAP_TEST("short, foreign, another job's, unknown-type and out-of-job datagrams are refused") {
        m = good_msg(IBMC_CM_MSG_REQ, 3);
        TAP_EXPECT_EQ(ibmc_cm_msg_parse(&m, sizeof(m) - 1, KEY, 4, &out), IBMC_CM_MSG_ERR_SHORT);
        TAP_EXPECT_EQ(ibmc_cm_msg_parse(&m, 24, KEY, 4, &out), IBMC_CM_MSG_ERR_SHORT);
        m.magic ^= 1;
        TAP_EXPECT_EQ(ibmc_cm_msg_parse(&m, sizeof(m), KEY, 4, &out), IBMC_CM_MSG_ERR_MAGIC);
        m = good_msg(IBMC_CM_MSG_REQ, 3);
        TAP_EXPECT_EQ(ibmc_cm_msg_parse(&m, sizeof(m), KEY + 1, 4, &out), IBMC_CM_MSG_ERR_JOB);
        m.type = 3;
        TAP_EXPECT_EQ(ibmc_cm_msg_parse(&m, sizeof(m), KEY, 4, &out), IBMC_CM_MSG_ERR_TYPE);
        m = good_msg(IBMC_CM_MSG_REQ, 4);
        TAP_EXPECT_EQ(ibmc_cm_msg_parse(&m, sizeof(m), KEY, 4, &out), IBMC_CM_MSG_ERR_RANK);
        m.src_rank = UINT32_MAX;
        TAP_EXPECT_EQ(ibmc_cm_msg_parse(&m, sizeof(m), KEY, 4, &out), IBMC_CM_MSG_ERR_RANK);
    }

    TAP_TEST("InfiniBand: only the card's UD QP and LID (and GID, with a GRH) are believed") {
        ibmc_card_t c = card_ib();
        uint8_t grh[40] = { 0 };
        memcpy(grh + 8, c.gid, 16);
        ibmc_cm_src_t s = {.src_qp = 0x111, .slid = 9, .link_layer = IBMC_CM_LINK_IB };
        TAP_EXPECT_EQ(ibmc_cm_msg_check_source(&c, &s), IBMC_CM_MSG_OK);
        s.grh = grh;
        TAP_EXPECT_EQ(ibmc_cm_msg_check_source(&c, &s), IBMC_CM_MSG_OK);
        grh[20] ^= 1;
        TAP_EXPECT_EQ(ibmc_cm_msg_check_source(&c, &s), IBMC_CM_MSG_ERR_SOURCE);
        s.grh = NULL;
        s.src_qp = 0x112;       /* another QP of the same port: another process */
        TAP_EXPECT_EQ(ibmc_cm_msg_check_source(&c, &s), IBMC_CM_MSG_ERR_SOURCE);
        s.src_qp = 0x111;
        s.slid = 10;            /* the right QP number on another port */
        TAP_EXPECT_EQ(ibmc_cm_msg_check_source(&c, &s), IBMC_CM_MSG_ERR_SOURCE);
    }

    TAP_TEST("RoCE v2 over IPv4: the IPv4 source address in the GRH area is compared") {
        ibmc_card_t c = card_roce4();
        uint8_t grh[40] = { 0 };
        grh[32] = 10;
        grh[33] = 0;
        grh[34] = 2;
        grh[35] = 15;
        ibmc_cm_src_t s = {.src_qp = 0x222, .link_layer = IBMC_CM_LINK_ETH, .grh = grh };
        TAP_EXPECT_EQ(ibmc_cm_msg_check_source(&c, &s), IBMC_CM_MSG_OK);
        grh[35] = 16;           /* a neighbour on the same subnet */
        TAP_EXPECT_EQ(ibmc_cm_msg_check_source(&c, &s), IBMC_CM_MSG_ERR_SOURCE);
        grh[35] = 15;
        s.grh = NULL;           /* RoCE without a network header cannot be placed */
        TAP_EXPECT_EQ(ibmc_cm_msg_check_source(&c, &s), IBMC_CM_MSG_ERR_SOURCE);
        s.grh = grh;
        s.src_qp = 0x223;
        TAP_EXPECT_EQ(ibmc_cm_msg_check_source(&c, &s), IBMC_CM_MSG_ERR_SOURCE);
    }

    TAP_TEST("RoCE with an IPv6 GID: the GRH's source GID is compared") {
        ibmc_card_t c = card_roce4();
        c.gid[0] = 0xfe;
        c.gid[1] = 0x80;
        c.gid[10] = 0x12;       /* not IPv4-mapped */
        uint8_t grh[40] = { 0 };
        memcpy(grh + 8, c.gid, 16);
        ibmc_cm_src_t s = {.src_qp = 0x222, .link_layer = IBMC_CM_LINK_ETH, .grh = grh };
        TAP_EXPECT_EQ(ibmc_cm_msg_check_source(&c, &s), IBMC_CM_MSG_OK);
        grh[23] ^= 0x80;
        TAP_EXPECT_EQ(ibmc_cm_msg_check_source(&c, &s), IBMC_CM_MSG_ERR_SOURCE);
    }

    TAP_TEST("random datagrams never parse as the job's") {
        rng_t r;
        int accepted = 0;
        uint8_t buf[64];
        rng_seed(&r, 5);
        for (int i = 0; i < 100000; i++) {
            for (size_t k = 0; k < sizeof(buf); k++)
                buf[k] = (uint8_t) rng_next(&r);
            /* half of them with the right magic, to reach the later checks */
            if (i & 1) {
                uint32_t magic = IBMC_CM_MAGIC;
                memcpy(buf, &magic, 4);
            }
            accepted += ibmc_cm_msg_parse(buf, rng_below(&r, sizeof(buf) + 1), KEY, 8, &out) ==
                IBMC_CM_MSG_OK;
        }
        TAP_EXPECT_EQ(accepted, 0);
    }

    TAP_TEST("every error has its own message") {
        for (int e = IBMC_CM_MSG_ERR_ECHO; e < 0; e++)
            TAP_EXPECT(strcmp(ibmc_cm_msg_strerror(e), ibmc_cm_msg_strerror(e + 1)) != 0);
        TAP_EXPECT_STR_HAS(ibmc_cm_msg_strerror(IBMC_CM_MSG_ERR_SOURCE), "not sent from");
    }

    return tap_done();
}
