/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Unit tests of ibmc_mcast_tx: the packets a root builds, the window that
 * bounds them, the ACKs that open it (and the ones it must refuse), the
 * ring's answers to NAKs, and where a new root's window starts. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_mcast_tx.h"
#include "tap.h"

#define P 16
#define W 8
#define N 4                     /* members */
#define SELF 1

static const ibmc_mcast_id_t id = {.job_key = 42, .context_id = 9, .epoch = 1 };

typedef struct {
    ibmc_mcast_tx_t tx;
    uint32_t acked[N];
    unsigned char ring[W * (sizeof(ibmc_mcast_hdr_t) + P)];
    unsigned char data[20 * P];
} fixture_t;

static void setup(fixture_t * f)
{
    ibmc_mcast_tx_init(&f->tx, id, P, W, N, SELF, f->acked, f->ring);
    for (size_t i = 0; i < sizeof(f->data); i++)
        f->data[i] = (unsigned char) (i * 13 + 5);
}

static ibmc_mcast_hdr_t hdr_of(const void *pkt)
{
    ibmc_mcast_hdr_t h;
    memcpy(&h, pkt, sizeof(h));
    return h;
}

static void ack_all(fixture_t * f, uint32_t pos)
{
    for (int m = 0; m < N; m++)
        if (m != SELF)
            ibmc_mcast_tx_ack(&f->tx, m, pos);
}

int main(void)
{
    static fixture_t f;
    const void *pkt;
    size_t len;

    TAP_TEST("fragments carry the stream identity, position, index and exact payload") {
        setup(&f);
        uint64_t mlen = 2 * P + 3;
        ibmc_mcast_tx_begin(&f.tx, 0, 0, f.data, mlen);
        for (uint32_t i = 0; i < 3; i++) {
            TAP_EXPECT(!ibmc_mcast_tx_sent_all(&f.tx));
            TAP_EXPECT(ibmc_mcast_tx_next(&f.tx, &pkt, &len));
            ibmc_mcast_hdr_t h = hdr_of(pkt);
            uint32_t want = i < 2 ? P : 3;
            TAP_EXPECT_EQ(len, sizeof(h) + want);
            TAP_EXPECT_EQ(h.magic, IBMC_MCAST_MAGIC);
            TAP_EXPECT_EQ(h.type, IBMC_MCAST_DATA);
            TAP_EXPECT_EQ(h.job_key, id.job_key);
            TAP_EXPECT_EQ(h.context_id, id.context_id);
            TAP_EXPECT_EQ(h.epoch, id.epoch);
            TAP_EXPECT_EQ(h.seq, i);
            TAP_EXPECT_EQ(h.frag, i);
            TAP_EXPECT_EQ(h.msg_len, mlen);
            TAP_EXPECT_EQ(h.payload_len, want);
            TAP_EXPECT(memcmp((const unsigned char *) pkt + sizeof(h), f.data + i * P, want) == 0);
        }
        TAP_EXPECT(ibmc_mcast_tx_sent_all(&f.tx));
        TAP_EXPECT(!ibmc_mcast_tx_next(&f.tx, &pkt, &len));
        TAP_EXPECT_EQ(f.tx.packets, 3);
    }

    TAP_TEST("the window stops the root at min_acked + window; the slowest member's ACK opens it") {
        setup(&f);
        ibmc_mcast_tx_begin(&f.tx, 0, 0, f.data, 20 * P);
        int sent = 0;
        while (ibmc_mcast_tx_next(&f.tx, &pkt, &len))
            sent++;
        TAP_EXPECT_EQ(sent, W);
        TAP_EXPECT(ibmc_mcast_tx_blocked(&f.tx));
        ibmc_mcast_tx_ack(&f.tx, 0, 5);
        ibmc_mcast_tx_ack(&f.tx, 2, 3);
        TAP_EXPECT(ibmc_mcast_tx_blocked(&f.tx));       /* member 3 has said nothing */
        ibmc_mcast_tx_ack(&f.tx, 3, 2);
        TAP_EXPECT_EQ(f.tx.min_acked, 2);
        TAP_EXPECT(ibmc_mcast_tx_next(&f.tx, &pkt, &len));
        TAP_EXPECT(ibmc_mcast_tx_next(&f.tx, &pkt, &len));
        TAP_EXPECT(!ibmc_mcast_tx_next(&f.tx, &pkt, &len));
        ibmc_mcast_tx_ack(&f.tx, 3, 8);
        TAP_EXPECT_EQ(f.tx.min_acked, 3);
        TAP_EXPECT_EQ(f.tx.acks, 4);
    }

    TAP_TEST("ACKs from no member, from the root itself or past the message being sent are refused") {
        setup(&f);
        ibmc_mcast_tx_begin(&f.tx, 0, 0, f.data, 20 * P);
        for (int i = 0; i < 3; i++)
            ibmc_mcast_tx_next(&f.tx, &pkt, &len);
        TAP_EXPECT_EQ(ibmc_mcast_tx_ack(&f.tx, N, 1), -1);
        TAP_EXPECT_EQ(ibmc_mcast_tx_ack(&f.tx, -1, 1), -1);
        TAP_EXPECT_EQ(ibmc_mcast_tx_ack(&f.tx, SELF, 1), -1);
        TAP_EXPECT_EQ(ibmc_mcast_tx_ack(&f.tx, 0, 4), -1);
        TAP_EXPECT_EQ(f.tx.bogus_acks, 4);
        TAP_EXPECT_EQ(f.tx.min_acked, 0);
        /* an old ACK after a newer one changes nothing */
        TAP_EXPECT_EQ(ibmc_mcast_tx_ack(&f.tx, 0, 3), 0);
        TAP_EXPECT_EQ(ibmc_mcast_tx_ack(&f.tx, 0, 1), 0);
        TAP_EXPECT_EQ(f.tx.acked[0], 3);
        TAP_EXPECT_EQ(f.tx.old_acks, 1);
    }

    TAP_TEST("NAKs get the ring's copy while a member may need it, and nothing else") {
        setup(&f);
        ibmc_mcast_tx_begin(&f.tx, 0, 0, f.data, 4 * P);
        const void *orig[4];
        size_t olen[4];
        for (int i = 0; i < 4; i++)
            ibmc_mcast_tx_next(&f.tx, &orig[i], &olen[i]);
        TAP_EXPECT(ibmc_mcast_tx_lookup(&f.tx, 2, &pkt, &len));
        TAP_EXPECT(pkt == orig[2] && len == olen[2]);
        TAP_EXPECT(!ibmc_mcast_tx_lookup(&f.tx, 4, &pkt, &len));       /* never sent */
        TAP_EXPECT(!ibmc_mcast_tx_lookup(&f.tx, 0xfffffff0u, &pkt, &len));
        ack_all(&f, 2);
        TAP_EXPECT(!ibmc_mcast_tx_lookup(&f.tx, 1, &pkt, &len));       /* everyone has it */
        TAP_EXPECT(ibmc_mcast_tx_lookup(&f.tx, 3, &pkt, &len));
        TAP_EXPECT_EQ(f.tx.retransmits, 2);
        TAP_EXPECT_EQ(f.tx.early_naks, 1);
        TAP_EXPECT_EQ(f.tx.stale_naks, 2);
        /* a later message from this root after other roots' messages: the
         * positions in between are not this root's */
        ibmc_mcast_tx_begin(&f.tx, 6, 3, f.data, P);
        ibmc_mcast_tx_next(&f.tx, &pkt, &len);
        TAP_EXPECT_EQ(hdr_of(pkt).seq, 6);
        TAP_EXPECT(!ibmc_mcast_tx_lookup(&f.tx, 5, &pkt, &len));
        TAP_EXPECT_EQ(f.tx.bogus_naks, 1);
        TAP_EXPECT(ibmc_mcast_tx_lookup(&f.tx, 3, &pkt, &len));
        TAP_EXPECT(ibmc_mcast_tx_lookup(&f.tx, 6, &pkt, &len));
    }

    TAP_TEST("half a window outstanding asks for ACKs, at most once per quarter window") {
        setup(&f);
        ibmc_mcast_tx_begin(&f.tx, 0, 0, f.data, 20 * P);
        uint32_t asked = 0;
        for (int i = 0; ibmc_mcast_tx_next(&f.tx, &pkt, &len); i++)
            if (hdr_of(pkt).flags & IBMC_MCAST_F_ACK_REQ)
                asked |= 1u << hdr_of(pkt).seq;
        TAP_EXPECT_EQ(asked, (1u << (W / 2)) | (1u << (W / 2 + W / 4)));
    }

    TAP_TEST("back-to-back one-packet messages ask for ACKs once per quarter window of the stream, "
             "not once a message; after another root's messages, at the first packet past half") {
        setup(&f);
        uint32_t asked = 0;
        uint32_t pos = 0;
        /* the window stays full: every member has ACKed up to pos - W + 1 */
        for (int i = 0; i < 16; i++, pos++) {
            if (pos >= W - 1)
                ack_all(&f, pos - (W - 1));
            ibmc_mcast_tx_begin(&f.tx, pos, f.tx.min_acked, f.data, P);
            TAP_EXPECT(ibmc_mcast_tx_next(&f.tx, &pkt, &len));
            if (hdr_of(pkt).flags & IBMC_MCAST_F_ACK_REQ)
                asked |= 1u << hdr_of(pkt).seq;
        }
        /* outstanding reaches W / 2 at position 4; then every W / 4 */
        TAP_EXPECT_EQ(asked, (1u << 4) | (1u << 6) | (1u << 8) | (1u << 10) | (1u << 12) |
                      (1u << 14));
        /* positions 16..19 were another root's: this root asks on its first */
        ack_all(&f, 16);
        ibmc_mcast_tx_begin(&f.tx, 20, 16, f.data, P);
        TAP_EXPECT(ibmc_mcast_tx_next(&f.tx, &pkt, &len));
        TAP_EXPECT(hdr_of(pkt).flags & IBMC_MCAST_F_ACK_REQ);
    }

    TAP_TEST("a new root starts from the released position; stale ACKs are lifted, none trusted ahead") {
        setup(&f);
        ibmc_mcast_tx_begin(&f.tx, 0, 0, f.data, 2 * P);
        while (ibmc_mcast_tx_next(&f.tx, &pkt, &len));
        ibmc_mcast_tx_ack(&f.tx, 0, 2);
        /* other roots sent positions 2..94, the last of them while every
         * member had passed 90 (so 94 < 90 + W) */
        ibmc_mcast_tx_begin(&f.tx, 95, 90, f.data, 20 * P);
        TAP_EXPECT_EQ(f.tx.min_acked, 90);
        TAP_EXPECT_EQ(f.tx.acked[0], 90);
        int sent = 0;
        const void *last = NULL;
        while (ibmc_mcast_tx_next(&f.tx, &pkt, &len)) {
            sent++;
            last = pkt;
        }
        TAP_EXPECT_EQ(sent, 90 + W - 95);
        TAP_EXPECT(last && hdr_of(last).released == 90 && hdr_of(last).seq == 97);
        /* the members' ACKs open the window */
        ack_all(&f, 98);
        TAP_EXPECT_EQ(f.tx.min_acked, 98);
        TAP_EXPECT(ibmc_mcast_tx_next(&f.tx, &pkt, &len));
        TAP_EXPECT_EQ(hdr_of(pkt).seq, 98);
        TAP_EXPECT_EQ(hdr_of(pkt).frag, 3);
    }

    TAP_TEST("an ACK that comes before the root's next message starts opens its window") {
        setup(&f);
        ibmc_mcast_tx_begin(&f.tx, 0, 0, f.data, 2 * P);
        while (ibmc_mcast_tx_next(&f.tx, &pkt, &len));
        /* other roots sent 2..9; the members entered this root's next
         * broadcast, starting at 10, before the root did */
        for (int m = 0; m < N; m++)
            if (m != SELF)
                TAP_EXPECT_EQ(ibmc_mcast_tx_ack(&f.tx, m, 10), 0);
        TAP_EXPECT_EQ(f.tx.bogus_acks, 0);
        ibmc_mcast_tx_begin(&f.tx, 10, 2, f.data, 20 * P);
        TAP_EXPECT_EQ(f.tx.min_acked, 10);
        int sent = 0;
        while (ibmc_mcast_tx_next(&f.tx, &pkt, &len))
            sent++;
        TAP_EXPECT_EQ(sent, W);
        /* one that claims to be past the message's start is not kept */
        setup(&f);
        ibmc_mcast_tx_ack(&f.tx, 0, 50);
        ibmc_mcast_tx_begin(&f.tx, 10, 4, f.data, 20 * P);
        TAP_EXPECT_EQ(f.tx.acked[0], 4);
        TAP_EXPECT_EQ(f.tx.min_acked, 4);
    }

    TAP_TEST("a root's next message right after its own keeps the window exact, ahead ACKs still clamped") {
        setup(&f);
        ibmc_mcast_tx_begin(&f.tx, 0, 0, f.data, 4 * P);
        while (ibmc_mcast_tx_next(&f.tx, &pkt, &len));
        ibmc_mcast_tx_ack(&f.tx, 0, 3);
        ibmc_mcast_tx_ack(&f.tx, 2, 2);
        ibmc_mcast_tx_ack(&f.tx, 3, 4);
        /* back to back: the minimum (member 2 at 2) carries over as it was */
        ibmc_mcast_tx_begin(&f.tx, 4, 0, f.data, 20 * P);
        TAP_EXPECT_EQ(f.tx.min_acked, 2);
        TAP_EXPECT_EQ(f.tx.acked[0], 3);
        int sent = 0;
        while (ibmc_mcast_tx_next(&f.tx, &pkt, &len))
            sent++;
        TAP_EXPECT_EQ(sent, 2 + W - 4);
        ibmc_mcast_tx_ack(&f.tx, 2, 5);
        TAP_EXPECT_EQ(f.tx.min_acked, 3);
        /* a member that claims, between two messages of this root, to be
         * past the next one's start is not believed when it begins */
        setup(&f);
        ibmc_mcast_tx_begin(&f.tx, 0, 0, f.data, 2 * P);
        while (ibmc_mcast_tx_next(&f.tx, &pkt, &len));
        ack_all(&f, 2);
        TAP_EXPECT_EQ(ibmc_mcast_tx_ack(&f.tx, 0, 50), 0);
        ibmc_mcast_tx_begin(&f.tx, 2, 2, f.data, 20 * P);
        TAP_EXPECT_EQ(f.tx.acked[0], 2);
        TAP_EXPECT_EQ(f.tx.min_acked, 2);
        sent = 0;
        while (ibmc_mcast_tx_next(&f.tx, &pkt, &len))
            sent++;
        TAP_EXPECT_EQ(sent, W);
    }

    TAP_TEST("a full window names the members holding it back; after it, every member that has "
             "not acknowledged all that was sent; nobody once all is") {
        int who[N];
        setup(&f);
        ibmc_mcast_tx_begin(&f.tx, 0, 0, f.data, 20 * P);
        TAP_EXPECT_EQ(ibmc_mcast_tx_laggards(&f.tx, who, N), 0);        /* nothing sent */
        while (ibmc_mcast_tx_next(&f.tx, &pkt, &len));
        TAP_EXPECT(ibmc_mcast_tx_blocked(&f.tx));
        /* nobody has acknowledged: every member but the root holds it */
        TAP_EXPECT_EQ(ibmc_mcast_tx_laggards(&f.tx, who, N), N - 1);
        ibmc_mcast_tx_ack(&f.tx, 0, 3);
        ibmc_mcast_tx_ack(&f.tx, 3, 5);
        TAP_EXPECT_EQ(ibmc_mcast_tx_laggards(&f.tx, who, N), 1);
        TAP_EXPECT_EQ(who[0], 2);
        /* at most max of them */
        ibmc_mcast_tx_ack(&f.tx, 0, 0);
        TAP_EXPECT_EQ(ibmc_mcast_tx_laggards(&f.tx, who, 1), 1);
        /* the window opens: every member still behind next (W) is named */
        ibmc_mcast_tx_ack(&f.tx, 2, 2);
        TAP_EXPECT(!ibmc_mcast_tx_blocked(&f.tx));
        ibmc_mcast_tx_ack(&f.tx, 3, W);
        TAP_EXPECT_EQ(ibmc_mcast_tx_laggards(&f.tx, who, N), 2);
        TAP_EXPECT(who[0] == 0 && who[1] == 2);
        /* everyone has everything sent: nobody */
        for (int m = 0; m < N; m++)
            ibmc_mcast_tx_ack(&f.tx, m, f.tx.next);
        TAP_EXPECT_EQ(ibmc_mcast_tx_laggards(&f.tx, who, N), 0);
    }

    TAP_TEST("with co-roots only the ackers hold the window, and only they may ACK") {
        int who[N];
        /* member 2 acknowledges through a co-root (member 3) */
        static const unsigned char ackers[N] = { 1, 0, 0, 1 };
        setup(&f);
        ibmc_mcast_tx_set_ackers(&f.tx, ackers);
        ibmc_mcast_tx_begin(&f.tx, 0, 0, f.data, 20 * P);
        while (ibmc_mcast_tx_next(&f.tx, &pkt, &len));
        TAP_EXPECT_EQ(ibmc_mcast_tx_laggards(&f.tx, who, N), 2);
        TAP_EXPECT_EQ(ibmc_mcast_tx_ack(&f.tx, 2, 5), -1);
        TAP_EXPECT_EQ(f.tx.bogus_acks, 1);
        ibmc_mcast_tx_ack(&f.tx, 0, 4);
        ibmc_mcast_tx_ack(&f.tx, 3, 6);
        TAP_EXPECT_EQ(f.tx.min_acked, 4);
        TAP_EXPECT(!ibmc_mcast_tx_blocked(&f.tx));
        /* a new message: an acker's old ACK is raised to released, a non-acker ignored */
        ibmc_mcast_tx_ack(&f.tx, 0, 8);
        ibmc_mcast_tx_ack(&f.tx, 3, 8);
        ibmc_mcast_tx_begin(&f.tx, 8, 8, f.data, 20 * P);
        TAP_EXPECT_EQ(f.tx.min_acked, 8);
    }

    TAP_TEST("a communicator of one sends without waiting") {
        ibmc_mcast_tx_t tx;
        uint32_t acked[1];
        static unsigned char ring[W * (sizeof(ibmc_mcast_hdr_t) + P)];
        static unsigned char data[40 * P];
        ibmc_mcast_tx_init(&tx, id, P, W, 1, 0, acked, ring);
        ibmc_mcast_tx_begin(&tx, 0, 0, data, sizeof(data));
        int sent = 0;
        while (ibmc_mcast_tx_next(&tx, &pkt, &len))
            sent++;
        TAP_EXPECT_EQ(sent, 40);
    }

    return tap_done();
}
