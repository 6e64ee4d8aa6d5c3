/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* MPI_Allreduce with MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=ibmc_mcast: every
 * built-in operation on every datatype MPI allows it on, MINLOC/MAXLOC on
 * the pair types, a user-defined commutative and a non-commutative
 * operation (2x2 matrix products, whose order shows), each with and
 * without MPI_IN_PLACE, at several counts: the result is checked exactly
 * against what this program computes from every rank's input.  Then sums
 * of doubles whose rounding depends on the order of the additions: every
 * rank must hold the same bits.  The counters prove the path: a node
 * leader uses the multicast channel once per allreduce up to
 * MPIR_CVAR_IBMC_ALLREDUCE_MAX_BYTES (ibmc_mcast_bcasts), never above it,
 * and nothing fell back; each leader but the first reported one partial
 * result up the board tree per allreduce of at most 128 bytes with a
 * commutative operation on a contiguous datatype.
 *
 * usage: allreduce_mcast [--rounds R] [--expect-fallback] [--threads N]
 *                        [--expect-lossless] [--expect-rc-arrivals]
 *   --expect-fallback  the channel is off: no broadcast by multicast, one
 *                      fallback per allreduce at each leader, same results
 *   --expect-lossless  no injected loss: besides, no NAK, retransmission
 *                      or duplicate at any rank during the calls
 *   --expect-rc-arrivals  board writes are off
 *                      (MPIR_CVAR_IBMC_MCAST_RDMA_ACKS=0): every partial
 *                      result goes up as an RC message (else some must be
 *                      RDMA writes)
 *   --threads N        instead, under MPI_THREAD_MULTIPLE: N threads, each
 *                      on a duplicate of MPI_COMM_WORLD of its own, R x 100
 *                      exact integer sums and order-sensitive double sums
 *                      each, all at once */

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpit_pvar.h"

static int rank, size, fails;

static unsigned long long pvar(const char *name)
{
    return mpit_pvar_need("allreduce_mcast", name, &fails);
}

/* ---- built-in operations on the basic types ---- */

enum kind { K_INT, K_UINT, K_FLOAT };
typedef struct {
    MPI_Datatype type;
    const char *name;
    size_t size;
    enum kind kind;
} type_t;

#define T(t, ctype, k) { t, #t, sizeof(ctype), k }
static const type_t types[] = {
    T(MPI_SIGNED_CHAR, signed char, K_INT), T(MPI_UNSIGNED_CHAR, unsigned char, K_UINT),
    T(MPI_SHORT, short, K_INT), T(MPI_UNSIGNED_SHORT, unsigned short, K_UINT),
    T(MPI_INT, int, K_INT), T(MPI_UNSIGNED, unsigned, K_UINT),
    T(MPI_LONG, long, K_INT), T(MPI_UNSIGNED_LONG, unsigned long, K_UINT),
    T(MPI_LONG_LONG, long long, K_INT), T(MPI_UNSIGNED_LONG_LONG, unsigned long long, K_UINT),
    T(MPI_INT8_T, int8_t, K_INT), T(MPI_UINT16_T, uint16_t, K_UINT),
    T(MPI_INT32_T, int32_t, K_INT), T(MPI_UINT64_T, uint64_t, K_UINT),
    T(MPI_FLOAT, float, K_FLOAT), T(MPI_DOUBLE, double, K_FLOAT),
    T(MPI_LONG_DOUBLE, long double, K_FLOAT),
};

#define NTYPES (sizeof(types) / sizeof(types[0]))

typedef struct {
    MPI_Op op;
    const char *name;
    int on_float;               /* MPI allows it on floating point */
} op_t;

static const op_t ops[] = {
    {MPI_SUM, "MPI_SUM", 1}, {MPI_PROD, "MPI_PROD", 1}, {MPI_MAX, "MPI_MAX", 1},
    {MPI_MIN, "MPI_MIN", 1}, {MPI_LAND, "MPI_LAND", 0}, {MPI_LOR, "MPI_LOR", 0},
    {MPI_LXOR, "MPI_LXOR", 0}, {MPI_BAND, "MPI_BAND", 0}, {MPI_BOR, "MPI_BOR", 0},
    {MPI_BXOR, "MPI_BXOR", 0},
};

#define NOPS (sizeof(ops) / sizeof(ops[0]))

/* rank r's element i in type t: small, so that sums and products are
 * exact in every type (a 1-byte sum stays below 128, a product has a few
 * factors of 2 at most), never negative in an unsigned type, and varied
 * enough that a wrong or missing contribution shows */
static long long input(const type_t * t, int r, MPI_Aint i, MPI_Op op, long seed)
{
    int span = t->size == 1 ? (size < 8 ? 15 : 120 / size + 1) : 19;
    if (op == MPI_PROD)
        return (r + i + seed) % 3 == 0 ? 2 : 1;
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
        return (r * 3 + i + seed) % 4 == 0;
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR)
        return (r * 37 + i * 11 + seed) & 0x7f;
    return (r * 5 + i * 3 + seed) % span - (op == MPI_SUM || t->kind == K_UINT ? 0 : span / 2);
}

static long long combine(MPI_Op op, long long a, long long b)
{
    if (op == MPI_SUM)
        return a + b;
    if (op == MPI_PROD)
        return a * b;
    if (op == MPI_MAX)
        return a > b ? a : b;
    if (op == MPI_MIN)
        return a < b ? a : b;
    if (op == MPI_LAND)
        return a && b;
    if (op == MPI_LOR)
        return a || b;
    if (op == MPI_LXOR)
        return !a != !b;
    if (op == MPI_BAND)
        return a & b;
    if (op == MPI_BOR)
        return a | b;
    return a ^ b;
}

static void store(const type_t * t, void *buf, MPI_Aint i, long long v)
{
    char *p = (char *) buf + i * (MPI_Aint) t->size;
    if (t->kind == K_FLOAT) {
        if (t->size == sizeof(float)) {
            float f = (float) v;
            memcpy(p, &f, sizeof(f));
        } else if (t->size == sizeof(double)) {
            double d = (double) v;
            memcpy(p, &d, sizeof(d));
        } else {
            long double d = (long double) v;
            memcpy(p, &d, sizeof(d));
        }
    } else {
        /* little- or big-endian alike: the low t->size bytes of v */
        switch (t->size) {
            case 1: {
                    int8_t x = (int8_t) v;
                    memcpy(p, &x, 1);
                    break;
                }
            case 2: {
                    int16_t x = (int16_t) v;
                    memcpy(p, &x, 2);
                    break;
                }
            case 4: {
                    int32_t x = (int32_t) v;
                    memcpy(p, &x, 4);
                    break;
                }
            default:{
                    int64_t x = (int64_t) v;
                    memcpy(p, &x, 8);
                }
        }
    }
}

/* equal as values of the type (a long double's padding bytes are not
 * part of its value) */
static int same(const type_t * t, const void *a, const void *b, MPI_Aint i)
{
    const char *pa = (const char *) a + i * (MPI_Aint) t->size;
    const char *pb = (const char *) b + i * (MPI_Aint) t->size;
    if (t->kind == K_FLOAT && t->size != sizeof(float) && t->size != sizeof(double)) {
        long double x, y;
        memcpy(&x, pa, sizeof(x));
        memcpy(&y, pb, sizeof(y));
        return x == y;
    }
    return !memcmp(pa, pb, t->size);
}

static long calls, calls_mcast;         /* allreduces made, and of them within the limit */
static long calls_boards;       /* ... and of those, the ones the board tree takes */
static int max_bytes = 4096;

/* boards: a commutative operation on a contiguous datatype, which the board
 * tree takes up to 128 bytes */
static void count_call(MPI_Aint bytes, int boards)
{
    int within = max_bytes == 0 || bytes <= max_bytes;
    calls++;
    calls_mcast += within;
    calls_boards += within && boards && bytes > 0 && bytes <= 128;
}

static void builtin_ops(long seed, MPI_Aint count)
{
    for (size_t ti = 0; ti < NTYPES; ti++) {
        const type_t *t = &types[ti];
        char *in = malloc((size_t) count * t->size), *out = malloc((size_t) count * t->size);
        char *want = malloc((size_t) count * t->size);
        for (size_t oi = 0; oi < NOPS; oi++) {
            const op_t *o = &ops[oi];
            if (t->kind == K_FLOAT && !o->on_float)
                continue;
            for (int in_place = 0; in_place < 2; in_place++) {
                for (MPI_Aint i = 0; i < count; i++) {
                    long long w = input(t, 0, i, o->op, seed);
                    for (int r = 1; r < size; r++)
                        w = combine(o->op, w, input(t, r, i, o->op, seed));
                    store(t, want, i, w);
                    store(t, in_place ? out : in, i, input(t, rank, i, o->op, seed));
                }
                MPI_Allreduce(in_place ? MPI_IN_PLACE : in, out, (int) count, t->type, o->op,
                              MPI_COMM_WORLD);
                count_call(count * (MPI_Aint) t->size, 1);
                for (MPI_Aint i = 0; i < count; i++)
                    if (!same(t, out, want, i)) {
                        printf("allreduce_mcast: FAIL: rank %d: %s on %s, count %ld%s: element "
                               "%ld wrong\n", rank, o->name, t->name, (long) count,
                               in_place ? ", MPI_IN_PLACE" : "", (long) i);
                        fails++;
                        break;
                    }
            }
        }
        free(in);
        free(out);
        free(want);
    }
}

/* ---- MINLOC and MAXLOC ---- */

typedef struct {
    double v;
    int loc;
} double_int;
typedef struct {
    int v;
    int loc;
} int_int;

static void loc_ops(long seed, MPI_Aint count)
{
    int_int *ii = malloc(sizeof(*ii) * (size_t) count), *io = malloc(sizeof(*io) * (size_t) count);
    double_int *di = malloc(sizeof(*di) * (size_t) count);
    double_int *dout = malloc(sizeof(*dout) * (size_t) count);
    for (int maxloc = 0; maxloc < 2; maxloc++) {
        MPI_Op op = maxloc ? MPI_MAXLOC : MPI_MINLOC;
        for (MPI_Aint i = 0; i < count; i++) {
            int v = (int) ((rank * 5 + i * 3 + seed) % 7);
            ii[i].v = v;
            ii[i].loc = rank;
            di[i].v = v * 0.5;
            di[i].loc = rank;
        }
        MPI_Allreduce(ii, io, (int) count, MPI_2INT, op, MPI_COMM_WORLD);
        count_call(count * (MPI_Aint) sizeof(int_int), 1);
        MPI_Allreduce(di, dout, (int) count, MPI_DOUBLE_INT, op, MPI_COMM_WORLD);
        /* MPI_DOUBLE_INT has a hole after its int: not contiguous */
        count_call(count * (MPI_Aint) sizeof(double_int), 0);
        for (MPI_Aint i = 0; i < count; i++) {
            /* the extreme value, at the lowest rank that holds it */
            int best = -1, at = -1;
            for (int r = 0; r < size; r++) {
                int v = (int) ((r * 5 + i * 3 + seed) % 7);
                if (at < 0 || (maxloc ? v > best : v < best)) {
                    best = v;
                    at = r;
                }
            }
            if (io[i].v != best || io[i].loc != at || dout[i].v != best * 0.5 ||
                dout[i].loc != at) {
                printf("allreduce_mcast: FAIL: rank %d: %s count %ld element %ld: (%d, %d) and "
                       "(%g, %d), not (%d, %d)\n", rank, maxloc ? "MPI_MAXLOC" : "MPI_MINLOC",
                       (long) count, (long) i, io[i].v, io[i].loc, dout[i].v, dout[i].loc, best,
                       at);
                fails++;
                break;
            }
        }
    }
    free(ii);
    free(io);
    free(di);
    free(dout);
}

/* ---- user-defined operations ---- */

/* 2x2 matrices of unsigned ints, multiplied modulo 2^32: not commutative,
 * so a result in any order but rank order is wrong */
static void matmul(void *invec, void *inoutvec, int *len, MPI_Datatype * dt)
{
    (void) dt;
    const uint32_t *a = invec;
    uint32_t *b = inoutvec;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        /* inout = in * inout: in comes from lower ranks */
        uint32_t c[4] = {
            a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
            a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]
        };
        memcpy(b, c, sizeof(c));
    }
}

static void mat_of(int r, int k, long seed, uint32_t m[4])
{
    m[0] = 1;
    m[1] = (uint32_t) (r + k + seed) % 5;
    m[2] = (uint32_t) (r * 3 + k) % 4;
    m[3] = 1 + (uint32_t) r % 2;
}

static void user_ops(long seed, MPI_Aint count, MPI_Op mat, MPI_Datatype mat_t)
{
    uint32_t *in = malloc(16 * (size_t) count), *out = malloc(16 * (size_t) count);
    for (int in_place = 0; in_place < 2; in_place++) {
        for (MPI_Aint k = 0; k < count; k++)
            mat_of(rank, (int) k, seed, (in_place ? out : in) + 4 * k);
        MPI_Allreduce(in_place ? MPI_IN_PLACE : in, out, (int) count, mat_t, mat, MPI_COMM_WORLD);
        count_call(16 * count, 0);
        for (MPI_Aint k = 0; k < count; k++) {
            uint32_t w[4], m[4];
            mat_of(size - 1, (int) k, seed, w);
            for (int r = size - 2; r >= 0; r--) {
                int one = 1;
                mat_of(r, (int) k, seed, m);
                matmul(m, w, &one, NULL);       /* w = m_r * w */
            }
            if (memcmp(w, out + 4 * k, sizeof(w))) {
                printf("allreduce_mcast: FAIL: rank %d: non-commutative product, count %ld%s: "
                       "matrix %ld is not the product in rank order\n", rank, (long) count,
                       in_place ? ", MPI_IN_PLACE" : "", (long) k);
                fails++;
                break;
            }
        }
    }
    free(in);
    free(out);
}

static void xor_sum(void *invec, void *inoutvec, int *len, MPI_Datatype * dt)
{
    (void) dt;
    const uint64_t *a = invec;
    uint64_t *b = inoutvec;
    for (int i = 0; i < *len; i++)
        b[i] = (b[i] ^ a[i]) + (a[i] & b[i]) * 2;       /* = a + b, spelled otherwise */
}

static void user_commutative(long seed, MPI_Aint count, MPI_Op op)
{
    uint64_t *in = malloc(8 * (size_t) count), *out = malloc(8 * (size_t) count);
    for (MPI_Aint i = 0; i < count; i++)
        in[i] = (uint64_t) (rank + 1) * 1000003u + (uint64_t) i * 7 + (uint64_t) seed;
    MPI_Allreduce(in, out, (int) count, MPI_UINT64_T, op, MPI_COMM_WORLD);
    count_call(8 * count, 1);
    for (MPI_Aint i = 0; i < count; i++) {
        uint64_t w = 0;
        for (int r = 0; r < size; r++)
            w += (uint64_t) (r + 1) * 1000003u + (uint64_t) i * 7 + (uint64_t) seed;
        if (out[i] != w) {
            printf("allreduce_mcast: FAIL: rank %d: user-defined commutative sum, count %ld: "
                   "element %ld wrong\n", rank, (long) count, (long) i);
            fails++;
            break;
        }
    }
    free(in);
    free(out);
}

/* ---- the same bits everywhere ---- */

/* Sums whose rounding depends on the order: large terms of both signs and
 * small ones.  Every rank gathers every rank's result and compares bits. */
static void same_bits(long seed, MPI_Aint count)
{
    double *in = malloc(8 * (size_t) count), *out = malloc(8 * (size_t) count);
    double *all = malloc(8 * (size_t) count * (size_t) size);
    for (MPI_Aint i = 0; i < count; i++) {
        double big = (rank % 2 ? -1.0 : 1.0) * 1e16 * (1.0 + 0.37 * ((rank + i + seed) % 5));
        in[i] = big + 0.1 * (double) (rank + 1) + 1.0 / (double) (1 + i + seed);
    }
    MPI_Allreduce(in, out, (int) count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    count_call(8 * count, 1);
    /* a gather that is not an allreduce: MPICH's own allgather */
    MPI_Allgather(out, (int) count, MPI_DOUBLE, all, (int) count, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        if (memcmp(all + (size_t) r * (size_t) count, all, 8 * (size_t) count)) {
            printf("allreduce_mcast: FAIL: rank %d: count %ld: rank %d's double sum differs "
                   "in its bits from rank 0's\n", rank, (long) count, r);
            fails++;
            break;
        }
    free(in);
    free(out);
    free(all);
}

/* ---- threads ---- */

#define MAX_THREADS 8
typedef struct {
    MPI_Comm comm;
    int rounds;
    int fails;
    long calls;
} thread_arg_t;

static void *thread_body(void *p)
{
    thread_arg_t *a = p;
    enum { MAXN = 300 };
    int64_t in[MAXN], out[MAXN];
    double din[MAXN], dout[MAXN], *dall = malloc(sizeof(double) * MAXN * (size_t) size);
    for (int k = 0; k < a->rounds * 100 && !a->fails; k++) {
        int n = 1 + (k * 37) % MAXN;
        for (int i = 0; i < n; i++) {
            in[i] = (int64_t) (rank + 1) * (k + 1) + i;
            din[i] = (rank % 2 ? -1e16 : 1e16) * (1 + (rank + k) % 3) + 0.1 * (rank + i + 1);
        }
        MPI_Allreduce(in, out, n, MPI_INT64_T, MPI_SUM, a->comm);
        MPI_Allreduce(din, dout, n, MPI_DOUBLE, MPI_SUM, a->comm);
        a->calls += 2;
        MPI_Allgather(dout, n, MPI_DOUBLE, dall, n, MPI_DOUBLE, a->comm);
        for (int i = 0; i < n && !a->fails; i++) {
            int64_t w = (int64_t) size * (size + 1) / 2 * (k + 1) + (int64_t) size * i;
            if (out[i] != w)
                a->fails++;
        }
        for (int r = 0; r < size && !a->fails; r++)
            if (memcmp(dall + (size_t) r * (size_t) n, dall, sizeof(double) * (size_t) n))
                a->fails++;
        if (a->fails)
            printf("allreduce_mcast: FAIL: rank %d: a thread's allreduce %d (count %d) is wrong "
                   "or not the same bits at every rank\n", rank, k, n);
    }
    free(dall);
    return NULL;
}

/* args[t].comm made by the caller: a communicator's creation runs
 * allreduces of its own, which the counters must not see */
static void threads_run(thread_arg_t * args, int nthreads, int rounds)
{
    pthread_t th[MAX_THREADS];
    for (int t = 0; t < nthreads; t++)
        args[t].rounds = rounds;
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, thread_body, &args[t]);
    for (int t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        fails += args[t].fails;
        calls += args[t].calls;
        calls_mcast += args[t].calls;
    }
}

int main(int argc, char **argv)
{
    int provided, rounds = 3, expect_fallback = 0, expect_lossless = 0, nthreads = 0;
    int expect_rc = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--expect-fallback"))
            expect_fallback = 1;
        else if (!strcmp(argv[i], "--expect-lossless"))
            expect_lossless = 1;
        else if (!strcmp(argv[i], "--expect-rc-arrivals"))
            expect_rc = 1;
    }
    if (nthreads < 0 || nthreads > MAX_THREADS) {
        printf("allreduce_mcast: --threads takes 0 to %d\n", MAX_THREADS);
        return 2;
    }
    MPI_Init_thread(&argc, &argv, nthreads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    if (nthreads && provided != MPI_THREAD_MULTIPLE) {
        printf("allreduce_mcast: FAIL: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mb = getenv("MPIR_CVAR_IBMC_ALLREDUCE_MAX_BYTES");
    if (mb)
        max_bytes = atoi(mb);

    MPI_Comm node;
    int node_rank;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    int leader = node_rank == 0;

    MPI_Op mat, usum;
    MPI_Op_create(matmul, 0, &mat);
    MPI_Op_create(xor_sum, 1, &usum);
    MPI_Datatype mat_t;
    MPI_Type_contiguous(4, MPI_UINT32_T, &mat_t);
    MPI_Type_commit(&mat_t);

    /* counts: one element, an odd few, and as many as fill about the limit
     * for 8-byte types; the last round also goes over it */
    MPI_Aint counts[] = { 1, 3, 129, 500 };
    /* MPICH sets up its node-local collectives on a communicator's first
     * calls, with allreduces of its own on the node's communicator (where
     * a channel that is off counts a fallback): before the counters */
    for (int w = 0; w < 3; w++) {
        int one = 1, sum;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    thread_arg_t targs[MAX_THREADS];
    memset(targs, 0, sizeof(targs));
    for (int t = 0; t < nthreads; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &targs[t].comm);
    unsigned long long bcasts0 = pvar("ibmc_mcast_bcasts");
    unsigned long long fb0 = pvar("ibmc_mcast_fallbacks");
    unsigned long long arr0 = pvar("ibmc_mcast_arrivals_sent");
    unsigned long long wr0 = pvar("ibmc_mcast_arrivals_written");
    unsigned long long rep0[MPIT_NREPAIRS];
    mpit_repairs_read("allreduce_mcast", rep0, &fails);
    if (nthreads)
        threads_run(targs, nthreads, rounds);
    for (int r = 0; r < rounds && !fails && !nthreads; r++) {
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            MPI_Aint n = counts[c] + (c == 3 && r == rounds - 1 ? 600 : 0);
            builtin_ops(r * 13 + (long) c, n);
            loc_ops(r * 13 + (long) c, n);
            user_ops(r * 13 + (long) c, n, mat, mat_t);
            user_commutative(r * 13 + (long) c, n, usum);
            same_bits(r * 13 + (long) c, n);
        }
    }
    unsigned long long bcasts = pvar("ibmc_mcast_bcasts") - bcasts0;
    unsigned long long fb = pvar("ibmc_mcast_fallbacks") - fb0;
    unsigned long long arr = pvar("ibmc_mcast_arrivals_sent") - arr0;
    unsigned long long wr = pvar("ibmc_mcast_arrivals_written") - wr0;
    if (expect_lossless)
        mpit_repairs_check("allreduce_mcast", rank, rep0, &fails);
    for (int t = 0; t < nthreads; t++)
        MPI_Comm_free(&targs[t].comm);
    unsigned long long want = leader && !expect_fallback ? (unsigned long long) calls_mcast : 0;
    unsigned long long want_fb = leader && expect_fallback ? (unsigned long long) calls_mcast : 0;
    if (!fails && (bcasts != want || fb != want_fb)) {
        printf("allreduce_mcast: FAIL: rank %d%s: %llu broadcasts by multicast and %llu "
               "fallbacks in %ld allreduces (%ld within %d B); not %llu and %llu\n", rank,
               leader ? " (a node leader)" : "", bcasts, fb, calls, calls_mcast, max_bytes, want,
               want_fb);
        fails++;
    }
    /* the board tree: one report per allreduce it takes at each leader but
     * the leaders' rank 0 (world rank 0) */
    unsigned long long want_arr = leader && rank != 0 && !expect_fallback && !nthreads ?
        (unsigned long long) calls_boards : 0;
    if (!fails && !nthreads && (arr != want_arr || (expect_rc ? wr != 0 : want_arr && wr == 0))) {
        printf("allreduce_mcast: FAIL: rank %d%s: %llu partial results reported up the board "
               "tree, %llu of them by RDMA write, in %ld allreduces; not %llu, %s\n", rank,
               leader ? " (a node leader)" : "", arr, wr, calls, want_arr,
               expect_rc ? "none written" : "some written");
        fails++;
    }
    int all_fails;
    MPI_Allreduce(&fails, &all_fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!rank) {
        printf("allreduce_mcast: %d ranks, %ld allreduces (%ld within %d B, %ld up the board "
               "tree); rank 0: %llu broadcasts by multicast, %llu fallbacks\n", size, calls,
               calls_mcast, max_bytes, calls_boards, bcasts, fb);
        if (!all_fails)
            printf("allreduce_mcast: all checks passed\n");
    }
    MPI_Op_free(&mat);
    MPI_Op_free(&usum);
    MPI_Type_free(&mat_t);
    MPI_Comm_free(&node);
    MPI_T_finalize();
    MPI_Finalize();
    return all_fails ? 1 : 0;
}
