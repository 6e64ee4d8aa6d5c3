/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Fuzz target: the multicast receiver (ibmc_mcast_rx.h, ibmc_mcast_wire.h).
 *
 * Bytes 0-2 configure the receiver (payload_max 1..24, window 1..16, ACK
 * period and skew); the rest is a program of operations: crafted packets
 * (near the window, from the root or not, spoiled in one field or not,
 * some of them questions to the group),
 * raw packets, post (MPI_Bcast entered as a non-root), own (as the root,
 * also with huge lengths, so that the stream wraps past 2^32), missing
 * (NAK ranges) and the ACK calls.  A model of the documented behaviour runs
 * beside the receiver.
 *
 * Invariants: a packet is accepted (DELIVERED or HELD) exactly when it is
 * well formed, ours, inside the window, not a duplicate and from a member,
 * and for the posted message from its root where the root numbered it;
 * otherwise the verdict is one of the reasons that apply, it is counted
 * once, and nothing was written (user buffer, slot memory and slots are
 * unchanged); each fragment is delivered at most once, to its place and
 * nowhere else (guard bytes around the user buffer, exact allocations for
 * the rest); `next` advances in order over delivered positions only; a
 * complete message equals the payloads that were accepted for it; held
 * fragments are delivered at post only if from the root with the right
 * index and length; NAK ranges are inside the posted message and the
 * window, cover only missing positions, all of them (all = 1) or each new
 * gap below the posted root's highest packet once (all = 0); `released`
 * moves only forward, on a verified packet, never past its position; an
 * ACK is due once `next` passes a packet that
 * asked for it or this receiver's skewed turn, and not right after one was
 * taken.  The same bytes read as a root's question to the group
 * (ibmc_mcast_rx_ask) are believed only when whole, well formed, ours,
 * from a member and within a window of `next`, and change nothing. */

#include "fuzz_util.h"
#include "ibmc_mcast_rx.h"

#define GUARD 16
#define GUARD_BYTE 0xa5
#define FRESH_BYTE 0x3c
#define MAX_POST 1500
#define HSZ sizeof(ibmc_mcast_hdr_t)

static const ibmc_mcast_id_t ID = {.job_key = 0x1122334455667788ULL, .context_id = 7, .epoch = 3 };

typedef struct {
    int valid;
    uint32_t pos, frag, released;
    uint64_t msg_len;
    int src, ack_req;
    uint16_t plen;
    uint8_t payload[32];
} held_t;

typedef struct {
    /* receiver and its memory */
    ibmc_mcast_rx_t rx;
    ibmc_mcast_slot_t *slots;
    unsigned char *slot_mem;
    uint32_t pm, w, ack_every, ack_skew;

    /* model */
    uint32_t next, seen_end, acked, released;
    int ack_pending;
    uint32_t ack_pos;
    uint64_t count[IBMC_MCAST_RX_NVERDICTS], frags_delivered;
    held_t *held;               /* w entries, by position mod w */

    int posted, root;
    uint32_t first, nfrags;
    uint64_t len;
    unsigned char *buf;         /* between guards */
    uint8_t *expect, *delivered, *gap_rep, *any_rep;
} st_t;

static int32_t sd(uint32_t a, uint32_t b)
{
    return ibmc_mcast_seq_diff(a, b);
}

static uint64_t nfrags_of(uint64_t len, uint32_t pm)
{
    return ibmc_mcast_nfrags(len, pm);
}

static int in_posted(const st_t * s, uint32_t pos)
{
    return s->posted && sd(pos, s->first) >= 0 && (uint32_t) sd(pos, s->first) < s->nfrags;
}

static void free_msg(st_t * s)
{
    if (s->buf)
        free(s->buf - GUARD);
    free(s->expect);
    free(s->delivered);
    free(s->gap_rep);
    free(s->any_rep);
    s->buf = NULL;
    s->expect = s->delivered = s->gap_rep = s->any_rep = NULL;
}

static void check_guards(const st_t * s)
{
    if (!s->buf)
        return;
    for (size_t i = 0; i < GUARD; i++) {
        CHECK(s->buf[-1 - (ptrdiff_t) i] == GUARD_BYTE, "write before the user buffer");
        CHECK(s->buf[s->len + i] == GUARD_BYTE, "write past the user buffer (len %llu)",
              (unsigned long long) s->len);
    }
}

/* Move the model's `next` over delivered positions; finish the message. */
static void model_advance(st_t * s)
{
    while (in_posted(s, s->next) && s->delivered[s->next - s->first])
        s->next++;
    if (sd(s->seen_end, s->next) < 0)
        s->seen_end = s->next;
    if (s->posted && s->next == s->first + s->nfrags) {
        /* complete: the buffer is what was accepted for it, and only that */
        CHECK(memcmp(s->buf, s->expect, s->len) == 0, "completed message differs from the "
              "fragments accepted for it");
        check_guards(s);
        s->posted = 0;
        free_msg(s);
    }
}

static void check_common(st_t * s)
{
    ibmc_mcast_rx_t *rx = &s->rx;
    CHECK(rx->next == s->next, "next %u, model %u", rx->next, s->next);
    CHECK(ibmc_mcast_rx_complete(rx) == !s->posted, "complete() %d with %s message",
          ibmc_mcast_rx_complete(rx), s->posted ? "an incomplete" : "no");
    for (int v = 0; v < IBMC_MCAST_RX_NVERDICTS; v++)
        CHECK(rx->count[v] == s->count[v], "count[%d] %llu, model %llu", v,
              (unsigned long long) rx->count[v], (unsigned long long) s->count[v]);
    CHECK(rx->frags_delivered == s->frags_delivered, "frags_delivered");
    CHECK(rx->released == s->released, "released %u, model %u", rx->released, s->released);
    /* nothing held lies below next: it would be skipped, never delivered */
    for (uint32_t i = 0; i < s->w; i++)
        if (s->held[i].valid)
            CHECK(sd(s->held[i].pos, s->next) >= 0 && (uint32_t) sd(s->held[i].pos, s->next) <
                  s->w, "held position %u outside the window at %u", s->held[i].pos, s->next);
    check_guards(s);
}

/* Is an ACK owed by the documented rules (one direction only: post may ask
 * for more)? */
static int ack_owed(const st_t * s)
{
    if (s->ack_pending && sd(s->next, s->ack_pos) > 0)
        return 1;
    if (s->ack_every == 0 || s->next == s->acked)
        return 0;
    uint32_t to_turn = (s->ack_skew - s->acked) & (s->ack_every - 1);
    return to_turn < (uint32_t) (s->next - s->acked);
}

static void want_ack(st_t * s, uint32_t pos)
{
    if (!s->ack_pending || sd(pos, s->ack_pos) > 0)
        s->ack_pos = pos;
    s->ack_pending = 1;
}

static void take_released(st_t * s, uint32_t rel, uint32_t pos)
{
    if (sd(rel, s->released) > 0 && sd(rel, pos) <= 0)
        s->released = rel;
}

#define R(v) (1u << (v))

/* ---- packets ---- */

static void packet(st_t * s, const uint8_t * pkt, size_t len, int src)
{
    ibmc_mcast_rx_t *rx = &s->rx;
    unsigned why = 0;
    int accept = -1;            /* DELIVERED or HELD when accepted */
    ibmc_mcast_hdr_t h;

    memset(&h, 0, sizeof(h));
    if (len < HSZ) {
        why = R(IBMC_MCAST_RX_MALFORMED);
    } else {
        memcpy(&h, pkt, HSZ);
        if (h.magic != IBMC_MCAST_MAGIC || h.version != IBMC_MCAST_VERSION ||
            h.type != IBMC_MCAST_DATA) {
            why = R(IBMC_MCAST_RX_MALFORMED);
        } else {
            uint64_t nf = nfrags_of(h.msg_len, s->pm);
            int shape = h.payload_len == len - HSZ && nf > 0 && nf <= 0x7fffffffu &&
                h.frag < nf && h.payload_len == (h.frag + 1 < nf ? s->pm :
                                                 h.msg_len - (uint64_t) h.frag * s->pm);
            if (h.job_key != ID.job_key || h.context_id != ID.context_id)
                why |= R(IBMC_MCAST_RX_FOREIGN);
            if (h.epoch != ID.epoch)
                why |= R(IBMC_MCAST_RX_STALE_EPOCH);
            if (src < 0)
                why |= R(IBMC_MCAST_RX_FOREIGN);
            if (!shape)
                why |= R(IBMC_MCAST_RX_MALFORMED);
            if (!why) {
                int32_t d = sd(h.seq, s->next);
                const held_t *hd = &s->held[h.seq & (s->w - 1)];
                if (d < 0)
                    why |= R(IBMC_MCAST_RX_DUPLICATE);
                else if ((uint32_t) d >= s->w)
                    why |= R(IBMC_MCAST_RX_OUT_OF_WINDOW);
                else if ((hd->valid && hd->pos == h.seq) ||
                         (in_posted(s, h.seq) && s->delivered[h.seq - s->first]))
                    why |= R(IBMC_MCAST_RX_DUPLICATE);
                if (!why) {
                    if (in_posted(s, h.seq)) {
                        if (src != s->root)
                            why |= R(IBMC_MCAST_RX_WRONG_SOURCE);
                        if (h.frag != h.seq - s->first || h.msg_len != s->len)
                            why |= R(IBMC_MCAST_RX_MISMATCH);
                        if (!why)
                            accept = IBMC_MCAST_RX_DELIVERED;
                    } else {
                        accept = IBMC_MCAST_RX_HELD;
                    }
                }
            }
        }
    }

    /* snapshots of everything a rejected packet must leave alone */
    size_t slot_bytes = (size_t) s->w * s->pm;
    unsigned char *mem0 = malloc(slot_bytes + 1), *buf0 = NULL;
    ibmc_mcast_slot_t *slots0 = malloc(sizeof(*slots0) * s->w);
    memcpy(mem0, s->slot_mem, slot_bytes);
    memcpy(slots0, s->slots, sizeof(*slots0) * s->w);
    if (s->buf) {
        buf0 = malloc(s->len + 1);
        memcpy(buf0, s->buf, s->len);
    }
    ibmc_mcast_rx_t rx0 = *rx;

    /* the same bytes read as a root's question to the group: believed only
     * whole and well-formed, and they touch nothing of the receiver */
    {
        uint32_t end = 0;
        int want_acks = 0;
        ibmc_mcast_rx_t rxq = *rx;      /* its counters apart from the modelled ones */
        ibmc_mcast_rx_verdict_t va = ibmc_mcast_rx_ask(&rxq, pkt, len, src, &end, &want_acks);
        CHECK(va >= 0 && va < IBMC_MCAST_RX_NVERDICTS, "question verdict %d", (int) va);
        if (va == IBMC_MCAST_RX_DELIVERED)
            CHECK(len == HSZ && h.magic == IBMC_MCAST_MAGIC && h.version == IBMC_MCAST_VERSION &&
                  h.type == IBMC_MCAST_ASK && h.payload_len == 0 && h.msg_len == 0 &&
                  h.frag == 0 && !(h.flags & ~IBMC_MCAST_F_ACK_REQ) &&
                  h.job_key == rx->id.job_key && h.context_id == rx->id.context_id &&
                  h.epoch == rx->id.epoch && src >= 0 && end == h.seq &&
                  sd(end, rx->next) <= (int32_t) s->w &&
                  want_acks == !!(h.flags & IBMC_MCAST_F_ACK_REQ),
                  "question accepted (seq %u, type %u, len %zu, src %d)", h.seq, h.type, len, src);
        CHECK(memcmp(mem0, s->slot_mem, slot_bytes) == 0 &&
              memcmp(slots0, s->slots, sizeof(*slots0) * s->w) == 0 &&
              (!buf0 || memcmp(buf0, s->buf, s->len) == 0) && rxq.next == rx0.next &&
              rxq.seen_end == rx0.seen_end && rxq.posted == rx0.posted && rxq.got == rx0.got &&
              rxq.released == rx0.released && rxq.ack_req == rx0.ack_req &&
              rxq.nak_mark == rx0.nak_mark, "a question changed the receiver");
    }

    ibmc_mcast_rx_verdict_t v = ibmc_mcast_rx_packet(rx, pkt, len, src);
    CHECK(v >= 0 && v < IBMC_MCAST_RX_NVERDICTS, "verdict %d", (int) v);
    s->count[v]++;
    TRACE("packet seq %u frag %u len %llu src %d -> verdict %d (model: accept %d, reasons 0x%x)",
          h.seq, h.frag, (unsigned long long) h.msg_len, src, (int) v, accept, why);

    if (accept < 0) {
        CHECK(v != IBMC_MCAST_RX_DELIVERED && v != IBMC_MCAST_RX_HELD,
              "packet accepted (verdict %d) though 0x%x applies (seq %u, next %u)", (int) v, why,
              h.seq, s->next);
        CHECK(why & R(v), "verdict %d does not apply; reasons 0x%x (seq %u next %u)", (int) v,
              why, h.seq, s->next);
        CHECK(memcmp(mem0, s->slot_mem, slot_bytes) == 0, "rejected packet wrote slot memory");
        CHECK(memcmp(slots0, s->slots, sizeof(*slots0) * s->w) == 0,
              "rejected packet changed a slot");
        CHECK(!buf0 || memcmp(buf0, s->buf, s->len) == 0, "rejected packet wrote the buffer");
        CHECK(rx->next == rx0.next && rx->seen_end == rx0.seen_end && rx->posted == rx0.posted &&
              rx->got == rx0.got && rx->released == rx0.released && rx->ack_req == rx0.ack_req,
              "rejected packet changed the receiver");
    } else {
        CHECK(v == (ibmc_mcast_rx_verdict_t) accept, "verdict %d, a correct packet should be %s "
              "(seq %u next %u)", (int) v, accept ? "HELD" : "DELIVERED", h.seq, s->next);
        const unsigned char *payload = pkt + HSZ;
        if (v == IBMC_MCAST_RX_DELIVERED) {
            uint32_t i = h.frag;
            size_t off = (size_t) i * s->pm;
            CHECK(!s->delivered[i], "fragment %u delivered twice", i);
            CHECK(memcmp(s->buf + off, payload, h.payload_len) == 0, "payload not at its place");
            memcpy(s->expect + off, payload, h.payload_len);
            CHECK(memcmp(buf0, s->buf, off) == 0 &&
                  memcmp(buf0 + off + h.payload_len, s->buf + off + h.payload_len,
                         s->len - off - h.payload_len) == 0, "delivery wrote outside its place");
            CHECK(memcmp(mem0, s->slot_mem, slot_bytes) == 0, "delivery wrote slot memory");
            s->delivered[i] = 1;
            s->frags_delivered++;
            if (h.flags & IBMC_MCAST_F_ACK_REQ)
                want_ack(s, h.seq);
            take_released(s, h.released, h.seq);
        } else {
            size_t off = (size_t) (h.seq & (s->w - 1)) * s->pm;
            CHECK(!buf0 || memcmp(buf0, s->buf, s->len) == 0, "held packet wrote the buffer");
            CHECK(memcmp(mem0, s->slot_mem, off) == 0 &&
                  memcmp(mem0 + off + h.payload_len, s->slot_mem + off + h.payload_len,
                         slot_bytes - off - h.payload_len) == 0 &&
                  memcmp(s->slot_mem + off, payload, h.payload_len) == 0,
                  "held payload not in its slot, or written elsewhere");
            CHECK(rx->released == rx0.released, "an unverified packet moved released");
            held_t *hd = &s->held[h.seq & (s->w - 1)];
            CHECK(!hd->valid, "two held positions in one slot (%u, %u)", hd->pos, h.seq);
            *hd = (held_t) {.valid = 1,.pos = h.seq,.frag = h.frag,.released = h.released,
                .msg_len = h.msg_len,.src = src,.ack_req = !!(h.flags & IBMC_MCAST_F_ACK_REQ),
                .plen = h.payload_len
            };
            memcpy(hd->payload, payload, h.payload_len);
        }
        /* only the posted root's packets reveal gaps: a root sends in order */
        if (s->posted && src == s->root && sd(h.seq + 1, s->seen_end) > 0)
            s->seen_end = h.seq + 1;
        model_advance(s);
    }
    free(mem0);
    free(slots0);
    free(buf0);
}

/* A packet near the receiver's state, correct or spoiled in one place. */
static void crafted(st_t * s, fz_t * in)
{
    uint8_t a = fz_u8(in), b = fz_u8(in);
    ibmc_mcast_hdr_t h = {.magic = IBMC_MCAST_MAGIC,.version = IBMC_MCAST_VERSION,
        .type = IBMC_MCAST_DATA,.context_id = ID.context_id,.epoch = ID.epoch,
        .job_key = ID.job_key
    };
    uint32_t base;
    switch (a & 3) {
        case 0:
            base = s->next;
            break;
        case 1:
            base = s->posted ? s->first : s->next;
            break;
        case 2:
            base = s->seen_end;
            break;
        default:
            base = fz_u32(in);
            break;
    }
    h.seq = base + (uint32_t) (int32_t) (int8_t) fz_u8(in);
    uint32_t mfirst = s->posted ? s->first : s->next;
    switch (a >> 2 & 3) {
        case 0:
            h.frag = h.seq - mfirst;
            break;
        case 1:
            h.frag = fz_u8(in) % 16;
            break;
        case 2:
            h.frag = fz_u32(in);
            break;
        default:
            h.frag = h.seq - mfirst + (uint32_t) (int32_t) (int8_t) fz_u8(in);
            break;
    }
    switch (a >> 4 & 3) {
        case 0:
            h.msg_len = s->posted ? s->len : fz_u16(in) % MAX_POST;
            break;
        case 1:
            h.msg_len = fz_u8(in);
            break;
        case 2:
            h.msg_len = fz_u16(in);
            break;
        default:
            h.msg_len = fz_u64(in);
            break;
    }
    uint64_t nf = nfrags_of(h.msg_len, s->pm);
    uint64_t want = h.frag < nf ? (h.frag + 1 < nf ? s->pm : h.msg_len - (uint64_t) h.frag * s->pm)
        : fz_u8(in) % 32;
    h.payload_len = (uint16_t) (want < 64 ? want : 64);
    h.flags = (uint16_t) (a >> 6);
    h.released = s->next + (uint32_t) (int32_t) (int8_t) fz_u8(in);

    int src = (b & 7) < 4 ? (b & 7) : (b & 7) == 4 ? -1 : s->posted ? s->root : 1;
    size_t plen = h.payload_len;
    switch (b >> 3 & 7) {
        case 4:{               /* a root's question to the group, another's or ours */
                uint8_t k = fz_u8(in);
                h.type = IBMC_MCAST_ASK;
                h.payload_len = 0;
                h.msg_len = 0;
                h.frag = 0;
                h.flags &= IBMC_MCAST_F_ACK_REQ;
                plen = 0;
                if (k % 4 == 0)
                    h.job_key ^= 1ull << (k % 64);
                else if (k % 4 == 1)
                    h.context_id ^= 1u << (k % 32);
                else if (k % 4 == 2)
                    h.epoch += (uint32_t) (int32_t) (int8_t) (k | 1);
                break;
            }
        case 5:{
                uint8_t k = fz_u8(in);
                if (k % 3 == 0)
                    h.magic ^= (uint16_t) (1 + k);
                else if (k % 3 == 1)
                    h.version ^= (uint8_t) (1 + (k >> 2));
                else
                    h.type ^= (uint8_t) (1 + (k >> 2));
                break;
            }
        case 6:{
                uint8_t k = fz_u8(in);
                if (k % 3 == 0)
                    h.job_key ^= 1ull << (k % 64);
                else if (k % 3 == 1)
                    h.context_id ^= 1u << (k % 32);
                else
                    h.epoch += (uint32_t) (int32_t) (int8_t) (k | 1);
                break;
            }
        case 7:{
                uint8_t k = fz_u8(in);
                if (k & 1)
                    h.payload_len = (uint16_t) (h.payload_len + (k & 2 ? 1 : -1));
                else
                    plen = plen + (k & 2 ? 1 : (plen ? -1 : 1));
                break;
            }
        default:
            break;
    }
    size_t len = HSZ + plen;
    uint8_t *pkt = malloc(len);
    memcpy(pkt, &h, HSZ);
    fz_bytes(in, pkt + HSZ, plen);
    packet(s, pkt, len, src);
    free(pkt);
}

/* Arbitrary bytes, with our identity or without. */
static void raw(st_t * s, fz_t * in)
{
    uint8_t a = fz_u8(in);
    size_t len = fz_u8(in) % 128;
    uint8_t *pkt = malloc(len ? len : 1);
    fz_bytes(in, pkt, len);
    if ((a & 1) && len >= HSZ) {
        ibmc_mcast_hdr_t h;
        memcpy(&h, pkt, HSZ);
        h.magic = IBMC_MCAST_MAGIC;
        h.version = IBMC_MCAST_VERSION;
        h.type = IBMC_MCAST_DATA;
        h.job_key = ID.job_key;
        h.context_id = ID.context_id;
        h.epoch = ID.epoch;
        if (a & 2)
            h.payload_len = (uint16_t) (len - HSZ);
        if (a & 4)
            h.seq = s->next + (h.seq & 31);
        memcpy(pkt, &h, HSZ);
    }
    packet(s, pkt, len, (int) (a >> 4 & 7) - 1);
    free(pkt);
}

/* ---- the collective's side ---- */

static int post(st_t * s, fz_t * in)
{
    if (s->posted)
        return 1;               /* the caller waits for the message to complete */
    uint64_t len = fz_u16(in) % MAX_POST;
    int root = fz_u8(in) % 4;
    uint64_t nf = nfrags_of(len, s->pm);
    uint32_t first = s->next;
    int expect_mismatch = 0;

    unsigned char *raw = malloc(len + 2 * GUARD);
    memset(raw, GUARD_BYTE, len + 2 * GUARD);
    memset(raw + GUARD, FRESH_BYTE, len);
    unsigned char *buf = raw + GUARD;

    if (nf) {
        s->posted = 1;
        s->root = root;
        s->first = first;
        s->nfrags = (uint32_t) nf;
        s->len = len;
        s->buf = buf;
        s->expect = malloc(len + 1);
        memset(s->expect, FRESH_BYTE, len);
        s->delivered = calloc(nf, 1);
        s->gap_rep = calloc(nf, 1);
        s->any_rep = calloc(nf, 1);
        uint32_t span = nf < s->w ? (uint32_t) nf : s->w;
        for (uint32_t i = 0; i < span && !expect_mismatch; i++) {
            held_t *hd = &s->held[(first + i) & (s->w - 1)];
            if (!hd->valid || hd->pos != first + i)
                continue;
            if (hd->src != root) {
                hd->valid = 0;
                s->count[IBMC_MCAST_RX_WRONG_SOURCE]++;
            } else if (hd->frag != i || hd->msg_len != len) {
                expect_mismatch = 1;
                s->count[IBMC_MCAST_RX_MISMATCH]++;
            } else {
                memcpy(s->expect + (size_t) i * s->pm, hd->payload, hd->plen);
                s->delivered[i] = 1;
                s->frags_delivered++;
                if (hd->ack_req)
                    want_ack(s, first + i);
                take_released(s, hd->released, first + i);
                if (sd(first + i + 1, s->seen_end) > 0)
                    s->seen_end = first + i + 1;
                hd->valid = 0;
            }
        }
    }

    ibmc_mcast_rx_verdict_t v = ibmc_mcast_rx_post(&s->rx, buf, len, root);
    TRACE("post len %llu root %d at %u -> %d", (unsigned long long) len, root, first, (int) v);
    if (expect_mismatch) {
        CHECK(v == IBMC_MCAST_RX_MISMATCH, "post: %d, a held fragment contradicts it", (int) v);
        if (!s->buf)
            free(raw);
        return 0;               /* the message is not usable: the run ends here */
    }
    CHECK(v == IBMC_MCAST_RX_DELIVERED, "post: %d", (int) v);
    if (!nf) {
        for (size_t i = 0; i < 2 * GUARD; i++)
            CHECK(raw[i] == GUARD_BYTE, "an empty message's buffer was written");
        free(raw);
    } else {
        /* delivered at post: in place, the rest untouched */
        for (size_t i = 0; i < len; i++)
            CHECK(buf[i] == s->expect[i], "byte %zu after post", i);
        model_advance(s);
    }
    check_common(s);
    return 1;
}

static void own(st_t * s, fz_t * in)
{
    if (s->posted)
        return;
    uint8_t a = fz_u8(in);
    uint64_t len = a & 1 ? fz_u32(in) & 0x7fffffff : fz_u16(in) % 4096;
    uint64_t nf = nfrags_of(len, s->pm);
    uint32_t first = s->next;
    uint64_t span = nf < s->w ? nf : s->w;
    for (uint64_t i = 0; i < span; i++) {
        held_t *hd = &s->held[(first + (uint32_t) i) & (s->w - 1)];
        if (hd->valid && hd->pos == first + (uint32_t) i) {
            hd->valid = 0;
            s->count[IBMC_MCAST_RX_WRONG_SOURCE]++;
        }
    }
    uint32_t got = ibmc_mcast_rx_own(&s->rx, len, a >> 4 & 3);
    TRACE("own len %llu at %u", (unsigned long long) len, got);
    CHECK(got == first, "own returned %u, next was %u", got, first);
    s->next = first + (uint32_t) nf;
    if (sd(s->seen_end, s->next) < 0)
        s->seen_end = s->next;
    s->acked = s->next;
    check_common(s);
}

static void missing(st_t * s, fz_t * in)
{
    uint8_t a = fz_u8(in);
    int all = a & 1, max = a >> 1 & 7;
    ibmc_mcast_range_t out[10];
    memset(out, 0xee, sizeof(out));
    int n = ibmc_mcast_rx_missing(&s->rx, all, out, max);
    TRACE("missing all=%d max=%d -> %d%s", all, max, n, n ? " ranges" : "");
    for (int i = 0; i < n; i++)
        TRACE("  [%u, +%u)", out[i].first, out[i].count);
    CHECK(n >= 0 && n <= max, "%d ranges for max %d", n, max);
    for (int i = n; i < 10; i++)
        CHECK(out[i].first == 0xeeeeeeeeu && out[i].count == 0xeeeeeeeeu,
              "range %d written beyond the %d returned", i, n);
    if (!s->posted) {
        CHECK(n == 0, "NAKs with no posted message");
        return;
    }
    uint32_t end = s->first + s->nfrags;
    if (sd(end, s->next + s->w) > 0)
        end = s->next + s->w;
    uint8_t *now = calloc(s->nfrags, 1);
    uint32_t prev_end = s->next;
    for (int i = 0; i < n; i++) {
        CHECK(out[i].count > 0, "empty range");
        CHECK(sd(out[i].first, prev_end) >= 0, "ranges overlap or go backwards");
        CHECK(sd(out[i].first + out[i].count, end) <= 0, "range [%u,+%u) beyond %u",
              out[i].first, out[i].count, end);
        for (uint32_t k = 0; k < out[i].count; k++) {
            uint32_t pos = out[i].first + k, f = pos - s->first;
            CHECK(!s->delivered[f], "NAK of delivered position %u", pos);
            if (!all) {
                CHECK(sd(pos, s->seen_end) < 0, "gap NAK of %u at or past seen %u", pos,
                      s->seen_end);
                CHECK(!s->gap_rep[f], "gap at %u reported twice", pos);
            }
            now[f] = 1;
        }
        prev_end = out[i].first + out[i].count;
    }
    if (n < max) {
        uint32_t lim = end;
        if (!all && sd(lim, s->seen_end) > 0)
            lim = s->seen_end;
        for (uint32_t pos = s->next; sd(lim, pos) > 0; pos++) {
            uint32_t f = pos - s->first;
            if (!s->delivered[f])
                CHECK(now[f] || (!all && s->any_rep[f]), "missing position %u not reported "
                      "(all=%d, next %u, seen %u)", pos, all, s->next, s->seen_end);
        }
    }
    for (uint32_t f = 0; f < s->nfrags; f++)
        if (now[f]) {
            s->any_rep[f] = 1;
            if (!all)
                s->gap_rep[f] = 1;
        }
    free(now);
    check_common(s);
}

static void ack(st_t * s, fz_t * in)
{
    int due = ibmc_mcast_rx_ack_due(&s->rx);
    TRACE("ack due %d (next %u)", due, s->next);
    if (ack_owed(s))
        CHECK(due, "an ACK is owed (next %u, acked %u, M %u, skew %u, req %d@%u) but not due",
              s->next, s->acked, s->ack_every, s->ack_skew, s->ack_pending, s->ack_pos);
    if (fz_u8(in) & 1) {
        uint32_t a = ibmc_mcast_rx_ack_take(&s->rx);
        CHECK(a == s->next, "ACK of %u, next is %u", a, s->next);
        s->acked = a;
        if (s->ack_pending && sd(s->next, s->ack_pos) > 0)
            s->ack_pending = 0;
        CHECK(!ibmc_mcast_rx_ack_due(&s->rx), "an ACK still due right after one was taken");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size)
{
    if (size < 3)
        return 0;
    st_t s;
    memset(&s, 0, sizeof(s));
    s.pm = 1 + data[0] % 24;
    s.w = 1u << ((data[1] & 7) % 5);
    s.ack_every = (data[1] >> 3 & 7) ? 1u << ((data[1] >> 3 & 7) - 1) : 0;
    s.ack_skew = data[2];
    s.slots = malloc(sizeof(*s.slots) * s.w);
    s.slot_mem = malloc((size_t) s.w * s.pm);
    s.held = calloc(s.w, sizeof(*s.held));
    memset(s.slots, 0xff, sizeof(*s.slots) * s.w);     /* init must clear them */
    memset(s.slot_mem, FRESH_BYTE, (size_t) s.w * s.pm);
    ibmc_mcast_rx_init(&s.rx, ID, s.pm, s.w, s.ack_every, s.ack_skew, s.slots, s.slot_mem);
    check_common(&s);

    fz_t in;
    fz_init(&in, data + 3, size - 3);
    int go = 1;
    for (int i = 0; i < 200 && go && !fz_empty(&in); i++) {
        uint8_t op = fz_u8(&in);
        switch (op % 16) {
            case 0: case 1: case 2: case 3: case 4: case 5: case 6:
                crafted(&s, &in);
                break;
            case 7:
                raw(&s, &in);
                break;
            case 8: case 9: case 10:
                go = post(&s, &in);
                break;
            case 11:
                own(&s, &in);
                break;
            case 12: case 13:
                missing(&s, &in);
                break;
            default:
                ack(&s, &in);
                break;
        }
        if (go)
            check_common(&s);
    }
    free_msg(&s);
    free(s.slots);
    free(s.slot_mem);
    free(s.held);
    return 0;
}
