/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Fuzz target: ibmc_pkt_parse() of RC packets and the compact MPIDIG_SEND
 * header (ibmc_send16_*), ibmc_pkt.h / ibmc_wire.h.
 *
 * Input: byte 0 picks rndv_info_sz (bits 0-1: 0, sizeof(ibmc_rndv_t),
 * byte 1, or 255) and the extra checks (bits 2-3); the rest is the packet.
 *
 * Invariants (abort when broken):
 *  - parse accepts exactly the packets the header documents as well formed,
 *    and on error returns a reason that applies to the packet;
 *  - on success payload/plen lie inside the input, right after the header
 *    (and extension), msg_sz >= am_hdr_sz, a first packet that says the
 *    message goes on has msg_sz > plen, RNDV holds rndv_info_sz bytes after
 *    the AM header, the VCIs and handler are in range, and the fields equal
 *    the bytes on the wire (ibmc_pkt_put_hdr writes the same header back),
 *    msg_sz <= IBMC_PKT_MAX_MSG_SZ where the header defines it;
 *  - parsing is deterministic and independent of alignment;
 *  - ibmc_send16_unpack returns 0, 16 or 24, never more than len, and
 *    ibmc_send16_pack of what it read writes the same bytes back;
 *  - put_hdr -> parse and send16 pack -> unpack are identities. */

#include "fuzz_util.h"
#include "ibmc_pkt.h"

static int allowed_flags(int type)
{
    /* ibmc_wire.h: STARVED anywhere, MSG_SZ on first packets (AM, RNDV),
     * SEND16 on IBMC_PKT_AM only */
    switch (type) {
        case IBMC_PKT_AM:
            return IBMC_PKT_F_STARVED | IBMC_PKT_F_MSG_SZ | IBMC_PKT_F_SEND16;
        case IBMC_PKT_RNDV:
            return IBMC_PKT_F_STARVED | IBMC_PKT_F_MSG_SZ;
        case IBMC_PKT_AM_CONT:
        case IBMC_PKT_RTU:
        case IBMC_PKT_RNDV_FIN:
        case IBMC_PKT_CREDIT:
        case IBMC_PKT_MCAST:
        case IBMC_PKT_FIN:
            return IBMC_PKT_F_STARVED;
        default:
            return -1;
    }
}

#define BIT(e) (1u << -(e))

/* The error codes that describe what is wrong with the packet (0: nothing). */
static unsigned reasons(const uint8_t * pkt, size_t len, size_t rndv_info_sz)
{
    ibmc_pkt_hdr_t h;
    unsigned r = 0;
    if (len < sizeof(h))
        return BIT(IBMC_PKT_ERR_SHORT);
    memcpy(&h, pkt, sizeof(h));
    int allowed = allowed_flags(h.type);
    if (allowed < 0)
        return BIT(IBMC_PKT_ERR_TYPE);
    int ext = (h.flags & IBMC_PKT_F_MSG_SZ) != 0;
    if ((h.flags & ~allowed) || (ext && (h.flags & IBMC_PKT_F_SEND16)) ||
        (h.type == IBMC_PKT_RNDV && !ext))
        r |= BIT(IBMC_PKT_ERR_FLAGS);
    size_t hlen = sizeof(h) + (ext ? sizeof(ibmc_pkt_msg_sz_t) : 0);
    if (len < hlen)
        return r | BIT(IBMC_PKT_ERR_SHORT);
    size_t plen = len - hlen;
    uint64_t msg_sz = plen;
    if (ext)
        memcpy(&msg_sz, pkt + sizeof(h), sizeof(msg_sz));
#ifdef IBMC_PKT_MAX_MSG_SZ
    if (msg_sz > IBMC_PKT_MAX_MSG_SZ)
        r |= BIT(IBMC_PKT_ERR_SIZE);
#endif
    if (h.type == IBMC_PKT_AM || h.type == IBMC_PKT_RNDV) {
        size_t need = (size_t) h.am_hdr_sz + (h.type == IBMC_PKT_RNDV ? rndv_info_sz : 0);
        if (plen < need)
            r |= BIT(IBMC_PKT_ERR_AM_HDR);
        if (msg_sz < h.am_hdr_sz || (h.type == IBMC_PKT_AM && ext && msg_sz <= plen))
            r |= BIT(IBMC_PKT_ERR_SIZE);
    }
    return r;
}

static void same_view(const ibmc_pkt_view_t * a, const ibmc_pkt_view_t * b, ptrdiff_t shift)
{
    CHECK(a->type == b->type && a->flags == b->flags && a->handler_id == b->handler_id &&
          a->src_vci == b->src_vci && a->dst_vci == b->dst_vci && a->credits == b->credits &&
          a->am_hdr_sz == b->am_hdr_sz && a->msg_sz == b->msg_sz && a->plen == b->plen &&
          a->payload + shift == b->payload, "two parses of the same bytes disagree");
}

static void check_parse(const uint8_t * pkt, size_t len, size_t rndv_info_sz)
{
    ibmc_pkt_view_t v, v2;
    int rc = ibmc_pkt_parse(pkt, len, rndv_info_sz, &v);
    unsigned why = reasons(pkt, len, rndv_info_sz);
    TRACE("parse %zu bytes (rndv_info_sz %zu): %d %s (reasons 0x%x)", len, rndv_info_sz, rc,
          ibmc_pkt_strerror(rc), why);

    CHECK(rc <= 0 && rc >= IBMC_PKT_ERR_FLAGS, "unknown return code %d", rc);
    CHECK(ibmc_pkt_strerror(rc) != NULL, "no message for %d", rc);
    if (rc != IBMC_PKT_OK) {
        CHECK(why != 0, "well-formed packet rejected: %s", ibmc_pkt_strerror(rc));
        CHECK(why & BIT(rc), "error %d (%s) does not apply (reasons 0x%x)", rc,
              ibmc_pkt_strerror(rc), why);
        CHECK(ibmc_pkt_parse(pkt, len, rndv_info_sz, &v2) == rc, "parse not deterministic");
        return;
    }
    CHECK(why == 0, "malformed packet accepted (reasons 0x%x)", why);

    ibmc_pkt_hdr_t h;
    memcpy(&h, pkt, sizeof(h));
    int ext = (h.flags & IBMC_PKT_F_MSG_SZ) != 0;
    size_t hlen = ibmc_pkt_hdr_len(ext);

    /* the payload is the input's tail */
    CHECK(len >= hlen, "accepted a packet shorter than its header");
    CHECK(v.payload == (const char *) pkt + hlen, "payload not right after the header");
    CHECK(v.plen == len - hlen, "plen %zu for %zu bytes after the header", v.plen, len - hlen);
    CHECK(v.payload >= (const char *) pkt && v.payload + v.plen == (const char *) pkt + len,
          "payload outside the input");

    /* fields as on the wire */
    CHECK(v.type == h.type && v.flags == h.flags && v.credits == h.credits, "header fields");
    CHECK(v.type >= IBMC_PKT_AM && v.type <= IBMC_PKT_FIN, "type %d", v.type);
    CHECK((v.flags & ~allowed_flags(v.type)) == 0, "flags 0x%x on type %d", v.flags, v.type);
    CHECK(!(ext && (v.flags & IBMC_PKT_F_SEND16)), "SEND16 on an unfinished message");
    if (ext) {
        uint64_t m;
        memcpy(&m, pkt + sizeof(h), sizeof(m));
        CHECK(v.msg_sz == m, "msg_sz %llu, extension says %llu", (unsigned long long) v.msg_sz,
              (unsigned long long) m);
    } else {
        CHECK(v.msg_sz == v.plen, "msg_sz of a one-packet message is not its payload");
    }
    CHECK(v.msg_sz >= v.am_hdr_sz, "msg_sz %llu < am_hdr_sz %zu", (unsigned long long) v.msg_sz,
          v.am_hdr_sz);
#ifdef IBMC_PKT_MAX_MSG_SZ
    CHECK(v.msg_sz <= IBMC_PKT_MAX_MSG_SZ, "msg_sz %llu above IBMC_PKT_MAX_MSG_SZ",
          (unsigned long long) v.msg_sz);
#endif

    if (v.type == IBMC_PKT_AM || v.type == IBMC_PKT_RNDV) {
        CHECK(v.handler_id == h.handler_id && v.handler_id >= 0 &&
              v.handler_id < IBMC_PKT_MAX_HANDLERS, "handler %d", v.handler_id);
        CHECK(v.src_vci >= 0 && v.src_vci < IBMC_PKT_MAX_VCIS && v.dst_vci >= 0 &&
              v.dst_vci < IBMC_PKT_MAX_VCIS && (v.src_vci << 4 | v.dst_vci) == h.vcis, "vcis");
        CHECK(v.am_hdr_sz == h.am_hdr_sz && v.am_hdr_sz <= IBMC_PKT_MAX_AM_HDR, "am_hdr_sz");
        CHECK(v.am_hdr_sz <= v.plen, "AM header %zu beyond payload %zu", v.am_hdr_sz, v.plen);
        if (v.type == IBMC_PKT_RNDV) {
            CHECK(ext, "RNDV without its size");
            CHECK(v.plen - v.am_hdr_sz >= rndv_info_sz, "RNDV info beyond the payload");
        }
        if (v.type == IBMC_PKT_AM && ext)
            CHECK(v.msg_sz > v.plen, "a message that 'goes on' ends in its first packet");

        /* the writer produces the same header (it leaves credits to the poster) */
        uint8_t back[16];
        ibmc_pkt_info_t info = {
            .type = v.type,.flags = v.flags,.handler_id = v.handler_id,.src_vci = v.src_vci,
            .dst_vci = v.dst_vci,.am_hdr_sz = v.am_hdr_sz,.has_msg_sz = ext,.msg_sz = v.msg_sz
        };
        size_t n = ibmc_pkt_put_hdr(back, &info);
        CHECK(n == hlen, "put_hdr wrote %zu bytes, parse skipped %zu", n, hlen);
        CHECK(back[0] == pkt[0] && back[1] == pkt[1] && back[2] == 0 && back[3] == 0 &&
              memcmp(back + 4, pkt + 4, n - 4) == 0, "put_hdr(parse(x)) != x");
    }

    /* deterministic, and the same at another alignment */
    CHECK(ibmc_pkt_parse(pkt, len, rndv_info_sz, &v2) == IBMC_PKT_OK, "parse not deterministic");
    same_view(&v, &v2, 0);
    uint8_t *copy = malloc(len + 1);
    memcpy(copy + 1, pkt, len);
    CHECK(ibmc_pkt_parse(copy + 1, len, rndv_info_sz, &v2) == IBMC_PKT_OK, "alignment matters");
    same_view(&v, &v2, (const char *) copy + 1 - (const char *) pkt);
    free(copy);
}

static void check_unpack(const uint8_t * src, size_t len)
{
    ibmc_send16_fields_t f;
    ibmc_send16_t w;
    memset(&f, 0x5a, sizeof(f));
    size_t n = ibmc_send16_unpack(src, len, &f);
    if (len < sizeof(w)) {
        CHECK(n == 0, "unpacked %zu from %zu bytes", n, len);
        return;
    }
    memcpy(&w, src, sizeof(w));
    int sreq = (w.bits & IBMC_SEND16_F_SREQ) != 0;
    if (len < ibmc_send16_len(sreq)) {
        CHECK(n == 0, "unpacked %zu from %zu bytes (sreq %d)", n, len, sreq);
        return;
    }
    CHECK(n == ibmc_send16_len(sreq) && n <= len, "unpack returned %zu", n);
    CHECK(f.src_rank == w.src_rank && f.tag == w.tag && f.context_id == w.context_id &&
          f.flags == w.flags && f.error_bits == w.error_bits && f.has_sreq == sreq,
          "unpacked fields differ from the bytes");
    if (sreq) {
        uint64_t s;
        memcpy(&s, src + sizeof(w), sizeof(s));
        CHECK(f.sreq == s, "sreq");
    }
    CHECK(ibmc_send16_fits(&f) == (w.flags < 0x80), "fits() of unpacked fields");
    uint8_t back[24];
    CHECK(ibmc_send16_pack(back, &f) == n, "pack length differs from unpack's");
    /* pack writes bits = SREQ only and reserved = 0 */
    ibmc_send16_t wb;
    memcpy(&wb, back, sizeof(wb));
    CHECK(wb.src_rank == w.src_rank && wb.tag == w.tag && wb.context_id == w.context_id &&
          wb.flags == w.flags && wb.error_bits == w.error_bits &&
          wb.bits == (sreq ? IBMC_SEND16_F_SREQ : 0) && wb.reserved == 0 &&
          memcmp(back + sizeof(wb), src + sizeof(w), n - sizeof(w)) == 0,
          "pack(unpack(x)) != x");
}

/* Writer -> parser: a header built within the caller's limits parses back. */
static void check_build(fz_t * in, size_t rndv_info_sz)
{
    ibmc_pkt_info_t info = {
        .type = fz_u8(in) % 8,
        .flags = fz_u8(in) & 7,
        .handler_id = fz_u8(in),
        .src_vci = fz_u8(in) & 15,
        .dst_vci = fz_u8(in) & 15,
        .am_hdr_sz = fz_u8(in),
        .has_msg_sz = fz_u8(in) & 1,
    };
    info.msg_sz = fz_u16(in);
    size_t plen = fz_u16(in) % 1024;
    uint8_t *pkt = malloc(16 + plen + 1);
    size_t hlen = ibmc_pkt_put_hdr(pkt, &info);
    CHECK(hlen == ibmc_pkt_hdr_len(info.has_msg_sz), "put_hdr length");
    fz_bytes(in, pkt + hlen, plen);
    check_parse(pkt, hlen + plen, rndv_info_sz);

    ibmc_pkt_view_t v;
    if (ibmc_pkt_parse(pkt, hlen + plen, rndv_info_sz, &v) == IBMC_PKT_OK &&
        (v.type == IBMC_PKT_AM || v.type == IBMC_PKT_RNDV)) {
        CHECK(v.handler_id == info.handler_id && v.src_vci == info.src_vci &&
              v.dst_vci == info.dst_vci && v.am_hdr_sz == info.am_hdr_sz &&
              v.msg_sz == (info.has_msg_sz ? info.msg_sz : plen) && v.credits == 0,
              "parse(put_hdr(info)) != info");
    }
    free(pkt);
}

static void check_pack(fz_t * in)
{
    ibmc_send16_fields_t f = {
        .src_rank = (int32_t) fz_u32(in),.tag = (int32_t) fz_u32(in),
        .context_id = fz_u32(in),.flags = fz_u8(in) & 0x7f,.error_bits = fz_u8(in),
        .has_sreq = fz_u8(in) & 1,.sreq = 0
    }, g;
    if (f.has_sreq)
        f.sreq = fz_u64(in);
    CHECK(ibmc_send16_fits(&f), "fields within the documented ranges do not fit");
    uint8_t *buf = malloc(ibmc_send16_len(f.has_sreq));        /* exact: ASan sees overruns */
    size_t n = ibmc_send16_pack(buf, &f);
    CHECK(n == ibmc_send16_len(f.has_sreq), "pack length");
    memset(&g, 0, sizeof(g));
    CHECK(ibmc_send16_unpack(buf, n, &g) == n, "unpack of a packed header");
    CHECK(g.src_rank == f.src_rank && g.tag == f.tag && g.context_id == f.context_id &&
          g.flags == f.flags && g.error_bits == f.error_bits && g.has_sreq == f.has_sreq &&
          (!f.has_sreq || g.sreq == f.sreq), "unpack(pack(f)) != f");
    CHECK(n < 24 || ibmc_send16_unpack(buf, n - 1, &g) == 0, "unpack of a truncated header");
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    static const size_t rndv_sz[4] = { 0, sizeof(ibmc_rndv_t), 0, 255 };
    size_t rndv_info_sz = (mode & 3) == 2 ? (size > 1 ? data[1] : 0) : rndv_sz[mode & 3];
    const uint8_t *pkt = data + 1;
    size_t len = size - 1;

    /* the packet in a buffer of its exact size */
    uint8_t *exact = malloc(len ? len : 1);
    memcpy(exact, pkt, len);
    check_parse(exact, len, rndv_info_sz);

    /* a compact header wherever a parsed AM packet says there is one, and at
     * the start of the raw bytes */
    ibmc_pkt_view_t v;
    if (ibmc_pkt_parse(exact, len, rndv_info_sz, &v) == IBMC_PKT_OK &&
        (v.flags & IBMC_PKT_F_SEND16))
        check_unpack((const uint8_t *) v.payload, v.plen);
    check_unpack(exact, len);
    free(exact);

    fz_t in;
    fz_init(&in, pkt, len);
    if (mode & 4)
        check_build(&in, rndv_info_sz);
    if (mode & 8)
        check_pack(&in);
    return 0;
}
