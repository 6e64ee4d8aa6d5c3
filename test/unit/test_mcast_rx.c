/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Unit tests of ibmc_mcast_rx: crafted packets, one property each.  Every
 * rejected packet must be counted under its reason and must not have
 * written a byte (the buffers carry a canary). */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_mcast_rx.h"
#include "tap.h"

#define P 16                    /* payload bytes per fragment */
#define W 8                     /* window */
#define ROOT 2
#define CANARY 0xa5

static const ibmc_mcast_id_t id = {.job_key = 0x1122334455667788ULL, .context_id = 7, .epoch = 3 };

typedef struct {
    ibmc_mcast_rx_t rx;
    ibmc_mcast_slot_t slots[W];
    unsigned char slot_mem[W * P];
    unsigned char buf[8 * P + 8];       /* 8 bytes of canary past any message */
} fixture_t;

static void setup(fixture_t * f, uint32_t ack_every, uint32_t ack_skew)
{
    ibmc_mcast_rx_init(&f->rx, id, P, W, ack_every, ack_skew, f->slots, f->slot_mem);
    memset(f->buf, CANARY, sizeof(f->buf));
}

static unsigned char byte_of(uint32_t seq, uint64_t off)
{
    return (unsigned char) (seq * 31 + off * 7 + 1);
}

/* A data packet of message (first, len) at fragment frag, as a correct
 * root would build it; the caller may spoil it. */
typedef struct {
    ibmc_mcast_hdr_t h;
    unsigned char payload[P + 8];
} pkt_t;

static size_t make(pkt_t * p, uint32_t first, uint32_t frag, uint64_t len)
{
    memset(p, 0, sizeof(*p));
    uint64_t off = (uint64_t) frag * P;
    uint16_t n = (uint16_t) (len - off < P ? len - off : P);
    p->h = (ibmc_mcast_hdr_t) {
        .magic = IBMC_MCAST_MAGIC,.version = IBMC_MCAST_VERSION,.type = IBMC_MCAST_DATA,
        .payload_len = n,.context_id = id.context_id,.epoch = id.epoch,.seq = first + frag,
        .frag = frag,.job_key = id.job_key,.msg_len = len
    };
    for (uint16_t i = 0; i < n; i++)
        p->payload[i] = byte_of(first, off + i);
    return sizeof(p->h) + n;
}

static int message_ok(const fixture_t * f, uint32_t first, uint64_t len)
{
    for (uint64_t i = 0; i < len; i++)
        if (f->buf[i] != byte_of(first, i))
            return 0;
    for (uint64_t i = len; i < sizeof(f->buf); i++)
        if (f->buf[i] != CANARY)
            return 0;
    return 1;
}

static int untouched(const fixture_t * f)
{
    for (size_t i = 0; i < sizeof(f->buf); i++)
        if (f->buf[i] != CANARY)
            return 0;
    return 1;
}

#define RX(f, p, n, src) ibmc_mcast_rx_packet(&(f)->rx, (p), (n), (src))

int main(void)
{
    static fixture_t f;
    pkt_t p;
    size_t n;

    TAP_TEST("in-order fragments land bit-exact at their place, next advances, the message completes") {
        setup(&f, 0, 0);
        uint64_t len = 2 * P + 5;
        TAP_EXPECT_EQ(ibmc_mcast_rx_post(&f.rx, f.buf, len, ROOT), IBMC_MCAST_RX_DELIVERED);
        for (uint32_t i = 0; i < 3; i++) {
            TAP_EXPECT(!ibmc_mcast_rx_complete(&f.rx));
            n = make(&p, 0, i, len);
            TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_DELIVERED);
            TAP_EXPECT_EQ(f.rx.next, i + 1);
        }
        TAP_EXPECT(ibmc_mcast_rx_complete(&f.rx));
        TAP_EXPECT(message_ok(&f, 0, len));
        TAP_EXPECT_EQ(f.rx.frags_delivered, 3);
    }

    TAP_TEST("out-of-order fragments: next waits for the first, duplicates are dropped") {
        setup(&f, 0, 0);
        uint64_t len = 3 * P;
        ibmc_mcast_rx_post(&f.rx, f.buf, len, ROOT);
        n = make(&p, 0, 2, len);
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_DELIVERED);
        TAP_EXPECT_EQ(f.rx.next, 0);
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_DUPLICATE);
        n = make(&p, 0, 1, len);
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_DELIVERED);
        TAP_EXPECT_EQ(f.rx.next, 0);
        n = make(&p, 0, 0, len);
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_DELIVERED);
        TAP_EXPECT_EQ(f.rx.next, 3);
        TAP_EXPECT(ibmc_mcast_rx_complete(&f.rx));
        /* below next: a late copy */
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_DUPLICATE);
        TAP_EXPECT_EQ(f.rx.count[IBMC_MCAST_RX_DUPLICATE], 2);
        TAP_EXPECT(message_ok(&f, 0, len));
    }

    TAP_TEST("a later message's fragments are held, then delivered when it is posted") {
        setup(&f, 0, 0);
        /* message 0: 1 fragment from ROOT; message 1: 2 fragments from rank 5 */
        n = make(&p, 1, 1, 2 * P);
        TAP_EXPECT_EQ(RX(&f, &p, n, 5), IBMC_MCAST_RX_HELD);
        n = make(&p, 0, 0, 4);
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_HELD);     /* nothing posted yet */
        TAP_EXPECT(untouched(&f));
        TAP_EXPECT_EQ(ibmc_mcast_rx_post(&f.rx, f.buf, 4, ROOT), IBMC_MCAST_RX_DELIVERED);
        TAP_EXPECT(ibmc_mcast_rx_complete(&f.rx));
        TAP_EXPECT(message_ok(&f, 0, 4));
        TAP_EXPECT_EQ(f.rx.next, 1);
        memset(f.buf, CANARY, sizeof(f.buf));
        TAP_EXPECT_EQ(ibmc_mcast_rx_post(&f.rx, f.buf, 2 * P, 5), IBMC_MCAST_RX_DELIVERED);
        TAP_EXPECT(!ibmc_mcast_rx_complete(&f.rx));
        n = make(&p, 1, 0, 2 * P);
        TAP_EXPECT_EQ(RX(&f, &p, n, 5), IBMC_MCAST_RX_DELIVERED);
        TAP_EXPECT(ibmc_mcast_rx_complete(&f.rx));
        TAP_EXPECT(message_ok(&f, 1, 2 * P));
        TAP_EXPECT_EQ(f.rx.next, 3);
        TAP_EXPECT_EQ(f.rx.frags_delivered, 3);
    }

    TAP_TEST("malformed packets are dropped and counted, nothing written") {
        setup(&f, 0, 0);
        ibmc_mcast_rx_post(&f.rx, f.buf, 3 * P, ROOT);
        int k = 0;
        n = make(&p, 0, 0, 3 * P);
        TAP_EXPECT_EQ(RX(&f, &p, sizeof(p.h) - 1, ROOT), IBMC_MCAST_RX_MALFORMED);
        k++;
        p.h.magic ^= 1;
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_MALFORMED);
        k++;
        n = make(&p, 0, 0, 3 * P);
        p.h.version = 9;
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_MALFORMED);
        k++;
        n = make(&p, 0, 0, 3 * P);
        p.h.type = 77;
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_MALFORMED);
        k++;
        /* payload_len disagrees with the datagram's length */
        n = make(&p, 0, 0, 3 * P);
        TAP_EXPECT_EQ(RX(&f, &p, n - 1, ROOT), IBMC_MCAST_RX_MALFORMED);
        k++;
        /* a fragment index past the message's end */
        n = make(&p, 0, 0, 3 * P);
        p.h.frag = 3;
        p.h.seq = 3;
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_MALFORMED);
        k++;
        /* a short middle fragment */
        n = make(&p, 0, 1, 3 * P);
        p.h.payload_len = P - 1;
        TAP_EXPECT_EQ(RX(&f, &p, n - 1, ROOT), IBMC_MCAST_RX_MALFORMED);
        k++;
        /* an empty message is never sent */
        n = make(&p, 0, 0, 0);
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_MALFORMED);
        k++;
        /* lengths near 2^64 must not wrap the fragment count into range */
        n = make(&p, 0, 0, 3 * P);
        p.h.msg_len = UINT64_MAX;
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_MALFORMED);
        k++;
        p.h.msg_len = UINT64_MAX - P + 2;
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_MALFORMED);
        k++;
        /* a payload longer than a fragment */
        n = make(&p, 0, 0, 3 * P);
        p.h.payload_len = P + 8;
        TAP_EXPECT_EQ(RX(&f, &p, n + 8, ROOT), IBMC_MCAST_RX_MALFORMED);
        k++;
        TAP_EXPECT_EQ(f.rx.count[IBMC_MCAST_RX_MALFORMED], k);
        TAP_EXPECT(untouched(&f));
        TAP_EXPECT_EQ(f.rx.next, 0);
        TAP_EXPECT_EQ(f.rx.seen_end, 0);
    }

    TAP_TEST("another job's, another communicator's and an old epoch's packets are dropped") {
        setup(&f, 0, 0);
        ibmc_mcast_rx_post(&f.rx, f.buf, P, ROOT);
        n = make(&p, 0, 0, P);
        p.h.job_key ^= 0x100;
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_FOREIGN);
        n = make(&p, 0, 0, P);
        p.h.context_id = 8;
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_FOREIGN);
        n = make(&p, 0, 0, P);
        p.h.epoch = 2;
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_STALE_EPOCH);
        TAP_EXPECT_EQ(f.rx.count[IBMC_MCAST_RX_FOREIGN], 2);
        TAP_EXPECT_EQ(f.rx.count[IBMC_MCAST_RX_STALE_EPOCH], 1);
        TAP_EXPECT(untouched(&f));
        TAP_EXPECT(!ibmc_mcast_rx_complete(&f.rx));
    }

    TAP_TEST("positions beyond the window are dropped; the window edge is accepted") {
        setup(&f, 0, 0);
        n = make(&p, W, 0, P);
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_OUT_OF_WINDOW);
        n = make(&p, W - 1, 0, P);
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_HELD);
        /* far behind next, the wrap-around half of the sequence space */
        n = make(&p, 0x80000000u, 0, P);
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_DUPLICATE);
        TAP_EXPECT(untouched(&f));
    }

    TAP_TEST("the posted message takes fragments from its root only") {
        setup(&f, 0, 0);
        ibmc_mcast_rx_post(&f.rx, f.buf, 2 * P, ROOT);
        n = make(&p, 0, 0, 2 * P);
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT + 1), IBMC_MCAST_RX_WRONG_SOURCE);
        TAP_EXPECT_EQ(RX(&f, &p, n, -1), IBMC_MCAST_RX_FOREIGN);
        TAP_EXPECT(untouched(&f));
        /* the slot is still free for the real one */
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_DELIVERED);
        /* a held fragment from the wrong source is dropped when its message is posted */
        setup(&f, 0, 0);
        n = make(&p, 0, 1, 2 * P);
        TAP_EXPECT_EQ(RX(&f, &p, n, 4), IBMC_MCAST_RX_HELD);
        TAP_EXPECT_EQ(ibmc_mcast_rx_post(&f.rx, f.buf, 2 * P, ROOT), IBMC_MCAST_RX_DELIVERED);
        TAP_EXPECT_EQ(f.rx.count[IBMC_MCAST_RX_WRONG_SOURCE], 1);
        TAP_EXPECT(untouched(&f));
        TAP_EXPECT_EQ(f.rx.got, 0);
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_DELIVERED);
    }

    TAP_TEST("a sibling communicator's packets (same context id and epoch, sender no member) "
             "count as foreign at every position, never as duplicates") {
        setup(&f, 0, 0);
        ibmc_mcast_rx_post(&f.rx, f.buf, 2 * P, ROOT);
        n = make(&p, 0, 0, 2 * P);
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_DELIVERED);
        /* the sibling's stream is at the same positions as this one's:
         * behind next, at a slot already done, in the window, beyond it */
        uint32_t at[4] = { 0, 1, 3, W + 2 };
        for (int i = 0; i < 4; i++) {
            n = make(&p, at[i], 0, P);
            TAP_EXPECT_EQ(RX(&f, &p, n, -1), IBMC_MCAST_RX_FOREIGN);
        }
        TAP_EXPECT_EQ(f.rx.count[IBMC_MCAST_RX_FOREIGN], 4);
        TAP_EXPECT_EQ(f.rx.count[IBMC_MCAST_RX_DUPLICATE], 0);
        TAP_EXPECT_EQ(f.rx.count[IBMC_MCAST_RX_OUT_OF_WINDOW], 0);
        TAP_EXPECT_EQ(f.rx.count[IBMC_MCAST_RX_HELD], 0);
        /* and the own stream goes on untouched */
        n = make(&p, 0, 1, 2 * P);
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_DELIVERED);
        TAP_EXPECT(message_ok(&f, 0, 2 * P));
    }

    TAP_TEST("a root whose length differs from the posted one is a mismatch, not a write") {
        setup(&f, 0, 0);
        ibmc_mcast_rx_post(&f.rx, f.buf, 2 * P, ROOT);
        n = make(&p, 0, 0, 3 * P);
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_MISMATCH);
        TAP_EXPECT(untouched(&f));
        setup(&f, 0, 0);
        n = make(&p, 0, 2, 3 * P);
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_HELD);
        TAP_EXPECT_EQ(ibmc_mcast_rx_post(&f.rx, f.buf, 4 * P, ROOT), IBMC_MCAST_RX_MISMATCH);
        TAP_EXPECT(untouched(&f));
    }

    TAP_TEST("gaps are NAKed once, the tail only on timeout, ranges are merged") {
        setup(&f, 0, 0);
        ibmc_mcast_rx_post(&f.rx, f.buf, 6 * P, ROOT);
        ibmc_mcast_range_t r[4];
        n = make(&p, 0, 0, 6 * P);
        RX(&f, &p, n, ROOT);
        TAP_EXPECT_EQ(ibmc_mcast_rx_missing(&f.rx, 0, r, 4), 0);
        n = make(&p, 0, 3, 6 * P);
        RX(&f, &p, n, ROOT);
        TAP_EXPECT_EQ(ibmc_mcast_rx_missing(&f.rx, 0, r, 4), 1);
        TAP_EXPECT_EQ(r[0].first, 1);
        TAP_EXPECT_EQ(r[0].count, 2);
        /* reported once */
        TAP_EXPECT_EQ(ibmc_mcast_rx_missing(&f.rx, 0, r, 4), 0);
        /* timeout: every missing position, the tail 4..5 included */
        TAP_EXPECT_EQ(ibmc_mcast_rx_missing(&f.rx, 1, r, 4), 2);
        TAP_EXPECT_EQ(r[0].first, 1);
        TAP_EXPECT_EQ(r[0].count, 2);
        TAP_EXPECT_EQ(r[1].first, 4);
        TAP_EXPECT_EQ(r[1].count, 2);
        /* another root's packet of a later message reveals nothing: it may
         * overtake the posted root's multicast (or come by relay) */
        setup(&f, 0, 0);
        ibmc_mcast_rx_post(&f.rx, f.buf, 2 * P, ROOT);
        n = make(&p, 0, 0, 2 * P);
        RX(&f, &p, n, ROOT);
        n = make(&p, 2, 0, P);
        TAP_EXPECT_EQ(RX(&f, &p, n, 5), IBMC_MCAST_RX_HELD);
        TAP_EXPECT_EQ(ibmc_mcast_rx_missing(&f.rx, 0, r, 4), 0);
        /* the same root's later message does: a root sends in order */
        n = make(&p, 3, 0, P);
        TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_HELD);
        TAP_EXPECT_EQ(ibmc_mcast_rx_missing(&f.rx, 0, r, 4), 1);
        TAP_EXPECT_EQ(r[0].first, 1);
        TAP_EXPECT_EQ(r[0].count, 1);
        /* max bounds the output */
        setup(&f, 0, 0);
        ibmc_mcast_rx_post(&f.rx, f.buf, 7 * P, ROOT);
        for (uint32_t i = 1; i < 7; i += 2) {
            n = make(&p, 0, i, 7 * P);
            RX(&f, &p, n, ROOT);
        }
        TAP_EXPECT_EQ(ibmc_mcast_rx_missing(&f.rx, 1, r, 2), 2);
        TAP_EXPECT_EQ(r[1].first, 2);
        TAP_EXPECT_EQ(ibmc_mcast_rx_missing(&f.rx, 1, r, 4), 4);
    }

    TAP_TEST("skewed ACKs: a receiver acknowledges when next passes its turn, or when asked") {
        setup(&f, 4, 1);
        uint64_t len = 8 * P;
        ibmc_mcast_rx_post(&f.rx, f.buf, len, ROOT);
        n = make(&p, 0, 0, len);
        RX(&f, &p, n, ROOT);
        TAP_EXPECT(!ibmc_mcast_rx_ack_due(&f.rx));      /* next 1: position 1 not passed */
        n = make(&p, 0, 1, len);
        RX(&f, &p, n, ROOT);
        TAP_EXPECT(ibmc_mcast_rx_ack_due(&f.rx));       /* next 2: passed 1 */
        TAP_EXPECT_EQ(ibmc_mcast_rx_ack_take(&f.rx), 2);
        TAP_EXPECT_EQ(f.rx.ack_root, ROOT);
        for (uint32_t i = 2; i < 5; i++) {
            n = make(&p, 0, i, len);
            RX(&f, &p, n, ROOT);
            TAP_EXPECT(!ibmc_mcast_rx_ack_due(&f.rx));  /* next 3..5: 5 not passed */
        }
        n = make(&p, 0, 5, len);
        RX(&f, &p, n, ROOT);
        TAP_EXPECT(ibmc_mcast_rx_ack_due(&f.rx));
        TAP_EXPECT_EQ(ibmc_mcast_rx_ack_take(&f.rx), 6);
        n = make(&p, 0, 6, len);
        p.h.flags = IBMC_MCAST_F_ACK_REQ;
        RX(&f, &p, n, ROOT);
        TAP_EXPECT(ibmc_mcast_rx_ack_due(&f.rx));
        TAP_EXPECT_EQ(ibmc_mcast_rx_ack_take(&f.rx), 7);
        TAP_EXPECT(!ibmc_mcast_rx_ack_due(&f.rx));
    }

    TAP_TEST("entering a message that does not fit past what its root knows of this receiver "
             "asks for an ACK; the receiver's own last ACK to that root counts, one to "
             "another root does not") {
        /* a root streaming with a full window: its packets carry released =
         * position - W + 1, and this receiver ACKed at its turns (every 4) */
        setup(&f, 4, 0);
        uint32_t pos = 0;
        for (; pos < 2 * W; pos++) {
            ibmc_mcast_rx_post(&f.rx, f.buf, P, ROOT);
            TAP_EXPECT(!ibmc_mcast_rx_ack_due(&f.rx));
            n = make(&p, pos, 0, P);
            p.h.released = pos >= W - 1 ? pos - (W - 1) : 0;
            RX(&f, &p, n, ROOT);
            if (ibmc_mcast_rx_ack_due(&f.rx))
                ibmc_mcast_rx_ack_take(&f.rx);
        }
        TAP_EXPECT_EQ(f.rx.released, W);
        /* another root takes the next message: it knows this receiver only
         * through released, and W + W does not hold position 2 W */
        ibmc_mcast_rx_post(&f.rx, f.buf, P, 5);
        TAP_EXPECT(ibmc_mcast_rx_ack_due(&f.rx));
        TAP_EXPECT_EQ(ibmc_mcast_rx_ack_take(&f.rx), 2 * W);
        n = make(&p, pos, 0, P);
        p.h.released = W + 1;
        RX(&f, &p, n, 5);
        /* ROOT again: this receiver's last ACK went to 5, not to it */
        ibmc_mcast_rx_post(&f.rx, f.buf, P, ROOT);
        TAP_EXPECT(ibmc_mcast_rx_ack_due(&f.rx));
        TAP_EXPECT_EQ(ibmc_mcast_rx_ack_take(&f.rx), 2 * W + 1);
    }

    TAP_TEST("released moves only on a verified root's packet, never past its own position") {
        setup(&f, 0, 0);
        ibmc_mcast_rx_post(&f.rx, f.buf, 3 * P, ROOT);
        n = make(&p, 0, 1, 3 * P);
        p.h.released = 1;
        RX(&f, &p, n, ROOT);
        TAP_EXPECT_EQ(f.rx.released, 1);
        n = make(&p, 0, 2, 3 * P);
        p.h.released = 5;       /* ahead of the packet itself: a lie */
        RX(&f, &p, n, ROOT);
        TAP_EXPECT_EQ(f.rx.released, 1);
        n = make(&p, 3, 0, P);
        p.h.released = 3;       /* held, not yet from a verified root */
        RX(&f, &p, n, 5);
        TAP_EXPECT_EQ(f.rx.released, 1);
    }

    TAP_TEST("a root's own positions count as delivered; anything held there is dropped") {
        setup(&f, 4, 0);
        n = make(&p, 0, 1, 3 * P);
        TAP_EXPECT_EQ(RX(&f, &p, n, 4), IBMC_MCAST_RX_HELD);    /* forged: nobody else sends there */
        TAP_EXPECT_EQ(ibmc_mcast_rx_own(&f.rx, 3 * P, ROOT), 0);
        TAP_EXPECT_EQ(f.rx.next, 3);
        TAP_EXPECT_EQ(f.rx.count[IBMC_MCAST_RX_WRONG_SOURCE], 1);
        TAP_EXPECT(!ibmc_mcast_rx_ack_due(&f.rx));
        TAP_EXPECT_EQ(f.slots[1].state, IBMC_MCAST_SLOT_EMPTY);
        /* a message longer than the window */
        TAP_EXPECT_EQ(ibmc_mcast_rx_own(&f.rx, 3 * W * P, ROOT), 3);
        TAP_EXPECT_EQ(f.rx.next, 3 + 3 * W);
        /* an empty message takes no position */
        TAP_EXPECT_EQ(ibmc_mcast_rx_post(&f.rx, f.buf, 0, ROOT), IBMC_MCAST_RX_DELIVERED);
        TAP_EXPECT(ibmc_mcast_rx_complete(&f.rx));
        TAP_EXPECT_EQ(f.rx.next, 3 + 3 * W);
    }

    TAP_TEST("a message longer than the window is received through it") {
        setup(&f, 0, 0);
        static unsigned char big[5 * W * P];
        uint64_t len = sizeof(big) - 3;
        ibmc_mcast_rx_post(&f.rx, big, len, ROOT);
        uint32_t nf = (uint32_t) ibmc_mcast_nfrags(len, P);
        for (uint32_t i = 0; i < nf; i++) {
            n = make(&p, 0, i, len);
            if (i + W < nf) {   /* one window ahead is out of it */
                pkt_t q;
                size_t m = make(&q, 0, i + W, len);
                TAP_EXPECT_EQ(RX(&f, &q, m, ROOT), IBMC_MCAST_RX_OUT_OF_WINDOW);
            }
            TAP_EXPECT_EQ(RX(&f, &p, n, ROOT), IBMC_MCAST_RX_DELIVERED);
        }
        TAP_EXPECT(ibmc_mcast_rx_complete(&f.rx));
        int ok = 1;
        for (uint64_t i = 0; i < len; i++)
            ok &= big[i] == byte_of(0, i);
        TAP_EXPECT(ok);
    }

    return tap_done();
}
