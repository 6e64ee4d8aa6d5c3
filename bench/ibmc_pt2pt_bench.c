/*
 * ibmc_pt2pt_bench: point-to-point latency and bandwidth between ranks 0 and 1.
 *
 *   ibmc_pt2pt_bench latency|bw|bibw [-m MAXBYTES] [-i ITERS] [-x WARMUP]
 *
 * latency  ping-pong; reports half the average round trip, in microseconds.
 * bw       rank 0 posts a window of WINDOW nonblocking sends, rank 1 a window
 *          of matching receives; when the window completes rank 1 returns a
 *          4-byte ack.  Reports bytes moved / time on rank 0, in MB/s
 *          (1 MB = 1e6 bytes).
 * bibw     both ranks post WINDOW receives and WINDOW sends at once and wait
 *          for all of them; reports the bytes moved in both directions / time
 *          on rank 0, in MB/s.
 *
 * Sizes are the powers of two from 1 B to MAXBYTES (default 4 MiB; K/M/G
 * suffixes are accepted).  Without -i the number of timed iterations falls
 * with the message size (see iters_for()) so that a whole sweep stays short
 * on slow (emulated) fabrics; -i N makes every size run N iterations.
 *
 * Verification: the last timed iteration of every size carries a payload
 * that depends on (test, size, iteration, sender).  It is prepared in a
 * separate send buffer and received into a separate, poisoned receive buffer
 * before the clock starts, and checked byte by byte after the clock stops, so
 * neither the fill nor the check is timed.  A mismatch aborts the job with
 * the size, iteration, offset and the expected and received bytes.
 *
 * All buffers are page-aligned (posix_memalign) and allocated once, at the
 * largest size.  Exactly two ranks.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WINDOW 64
#define TAG_DATA 100
#define TAG_ACK 101
#define DEFAULT_MAX ((size_t)4 << 20)

enum test { T_LATENCY, T_BW, T_BIBW };
static const char *const test_names[] = { "latency", "bw", "bibw" };

struct opts {
    enum test test;
    size_t max_bytes;
    long iters;   /* <= 0: size-dependent default */
    long warmup;  /* < 0: size-dependent default */
};

static int rank;

/* Buffers, each max_bytes long.  bulk: the payload of every iteration but the
 * verified one; vsend/vrecv: the verified iteration's send and receive.  For
 * bw/bibw, rbuf is the shared landing area of the other receives in a window
 * (as in the usual window benchmarks; their contents are not looked at). */
static unsigned char *bulk, *vsend, *rbuf, *vrecv;

static void die(const char *fmt, const char *arg)
{
    if (rank == 0) {
        fprintf(stderr, "ibmc_pt2pt_bench: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, "\n");
    }
    MPI_Finalize();
    exit(2);
}

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr,
                "usage: ibmc_pt2pt_bench latency|bw|bibw [-m MAXBYTES] [-i ITERS] [-x WARMUP]\n"
                "  -m MAXBYTES  largest message (default 4M; suffixes K, M, G)\n"
                "  -i ITERS     timed iterations for every size (default: fewer for large sizes)\n"
                "  -x WARMUP    untimed iterations before each size (default: size-dependent)\n");
    MPI_Finalize();
    exit(2);
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-')
        return -1;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end != '\0' || v == 0 || v > ((unsigned long long)1 << 40))
        return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < 0)
        return -1;
    *out = v;
    return 0;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
    o->max_bytes = DEFAULT_MAX;
    o->iters = 0;
    o->warmup = -1;
    if (argc < 2)
        usage();
    if (strcmp(argv[1], "latency") == 0) o->test = T_LATENCY;
    else if (strcmp(argv[1], "bw") == 0) o->test = T_BW;
    else if (strcmp(argv[1], "bibw") == 0) o->test = T_BIBW;
    else usage();
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc)
            usage();
        const char *v = argv[++i];
        if (strcmp(a, "-m") == 0) {
            if (parse_size(v, &o->max_bytes))
                die("bad -m value '%s' (want a positive byte count, e.g. 4194304 or 4M)", v);
        } else if (strcmp(a, "-i") == 0) {
            if (parse_long(v, &o->iters) || o->iters < 1)
                die("bad -i value '%s' (want an integer >= 1)", v);
        } else if (strcmp(a, "-x") == 0) {
            if (parse_long(v, &o->warmup))
                die("bad -x value '%s' (want an integer >= 0)", v);
        } else {
            usage();
        }
    }
}

/* Default timed iterations.  Tuned for the emulated Soft-RoCE VM (round
 * trips of 50 us to a few ms, 10-30 MB/s): small sizes get a fixed count, large ones a
 * byte budget, so one whole 1 B .. 4 MiB sweep of a test takes about a minute
 * there.  On real hardware use -i for steadier figures. */
static long iters_for(enum test t, size_t size)
{
    if (t == T_LATENCY) {
        if (size <= 4096) return 1000;
        long n = (long)(((size_t)4 << 20) / size);      /* 4 MiB each way */
        return n < 4 ? 4 : (n > 1000 ? 1000 : n);
    }
    /* one iteration = one window of WINDOW messages */
    if (size <= 1024) return 40;
    long n = (long)(((size_t)16 << 20) / (size * WINDOW)); /* 16 MiB per direction */
    return n < 1 ? 1 : (n > 40 ? 40 : n);
}

static long warmup_for(enum test t, size_t size)
{
    if (t == T_LATENCY)
        return size <= 65536 ? 20 : 1;
    return size <= 262144 ? 1 : 0;
}

/* splitmix64: a cheap, well-mixed generator for the payload. */
static inline uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t seed_of(enum test t, size_t size, long iter, int sender)
{
    return mix64(mix64(mix64((uint64_t)t * 0x100000001ULL + (uint64_t)size) ^ (uint64_t)iter) ^
                 (uint64_t)sender);
}

/* Byte j of the payload is byte (j % 8) of mix64(seed + j / 8), little-endian. */
static void fill(unsigned char *buf, size_t n, uint64_t seed)
{
    size_t j = 0;
    for (uint64_t w = 0; j < n; w++) {
        uint64_t v = mix64(seed + w);
        for (int b = 0; b < 8 && j < n; b++, j++)
            buf[j] = (unsigned char)(v >> (8 * b));
    }
}

static void verify(const unsigned char *buf, size_t n, enum test t, long iter, int sender)
{
    uint64_t seed = seed_of(t, n, iter, sender);
    size_t j = 0;
    for (uint64_t w = 0; j < n; w++) {
        uint64_t v = mix64(seed + w);
        for (int b = 0; b < 8 && j < n; b++, j++) {
            unsigned char want = (unsigned char)(v >> (8 * b));
            if (buf[j] != want) {
                size_t bad = 0;
                for (size_t k = j; k < n; k++) {  /* count the damage for the report */
                    uint64_t vk = mix64(seed + k / 8);
                    if (buf[k] != (unsigned char)(vk >> (8 * (k % 8))))
                        bad++;
                }
                fprintf(stderr,
                        "ibmc_pt2pt_bench: DATA MISMATCH in %s: rank %d received a %zu-byte "
                        "message from rank %d (iteration %ld) whose byte %zu is 0x%02x, expected "
                        "0x%02x; %zu of %zu bytes from there on are wrong. Aborting: the "
                        "transport corrupted the payload, the figures would be meaningless.\n",
                        test_names[t], rank, n, sender, iter, j, buf[j], want, bad, n - j);
                fflush(stderr);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
    }
}

static void check_mpi(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "ibmc_pt2pt_bench: rank %d: %s failed: %s\n", rank, what, msg);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
}

static void check_status_count(const MPI_Status *st, size_t size)
{
    int count;
    MPI_Get_count(st, MPI_BYTE, &count);
    if ((size_t)count != size) {
        fprintf(stderr, "ibmc_pt2pt_bench: rank %d received %d bytes, expected %zu\n", rank,
                count, size);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

/* One ping-pong.  The sender buffers are chosen by the caller. */
static void pingpong(size_t size, const void *sbuf, void *dst)
{
    MPI_Status st;
    int peer = 1 - rank;
    if (rank == 0) {
        check_mpi(MPI_Send(sbuf, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD), "MPI_Send");
        check_mpi(MPI_Recv(dst, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &st), "MPI_Recv");
    } else {
        check_mpi(MPI_Recv(dst, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &st), "MPI_Recv");
        check_mpi(MPI_Send(sbuf, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD), "MPI_Send");
    }
    check_status_count(&st, size);
}

/* One window.  last: this is the verified iteration, whose final message goes
 * from vsend to vrecv. */
static void window(enum test t, size_t size, int last)
{
    MPI_Request req[2 * WINDOW];
    MPI_Status st[2 * WINDOW];
    int peer = 1 - rank, nreq = 0, ack = 0;
    int sends = (t == T_BIBW) || rank == 0;
    int recvs = (t == T_BIBW) || rank == 1;

    if (recvs)
        for (int w = 0; w < WINDOW; w++)
            check_mpi(MPI_Irecv(last && w == WINDOW - 1 ? vrecv : rbuf, (int)size, MPI_BYTE, peer,
                                TAG_DATA, MPI_COMM_WORLD, &req[nreq++]), "MPI_Irecv");
    if (sends)
        for (int w = 0; w < WINDOW; w++)
            check_mpi(MPI_Isend(last && w == WINDOW - 1 ? vsend : bulk, (int)size, MPI_BYTE, peer,
                                TAG_DATA, MPI_COMM_WORLD, &req[nreq++]), "MPI_Isend");
    check_mpi(MPI_Waitall(nreq, req, st), "MPI_Waitall");
    if (recvs)
        for (int w = 0; w < WINDOW; w++)
            check_status_count(&st[w], size);
    if (t == T_BW) {
        if (rank == 0)
            check_mpi(MPI_Recv(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                      "MPI_Recv(ack)");
        else
            check_mpi(MPI_Send(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD), "MPI_Send(ack)");
    }
}

static double run_size(const struct opts *o, size_t size)
{
    enum test t = o->test;
    long iters = o->iters > 0 ? o->iters : iters_for(t, size);
    long warm = o->warmup >= 0 ? o->warmup : warmup_for(t, size);
    long last = iters - 1;
    int peer = 1 - rank;

    /* Untimed preparation: bulk payload, the verified payload, a poisoned
     * landing buffer for it. */
    fill(bulk, size, seed_of(t, size, -1, rank));
    fill(vsend, size, seed_of(t, size, last, rank));
    fill(vrecv, size, seed_of(t, size, last, peer)); /* the expected payload, */
    for (size_t j = 0; j < size; j++)                 /* inverted: every byte wrong */
        vrecv[j] ^= 0xff;

    for (long i = 0; i < warm; i++) {
        if (t == T_LATENCY)
            pingpong(size, bulk, rbuf);
        else
            window(t, size, 0);
    }
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");

    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        int is_last = i == last;
        if (t == T_LATENCY)
            pingpong(size, is_last ? vsend : bulk, is_last ? vrecv : rbuf);
        else
            window(t, size, is_last);
    }
    double el = MPI_Wtime() - t0;

    /* Rank 1 always receives the verified message; rank 0 does for latency
     * (the reply) and bibw. */
    if (rank == 1 || t != T_BW)
        verify(vrecv, size, t, last, peer);

    double v;
    if (t == T_LATENCY)
        v = el * 1e6 / (2.0 * (double)iters);
    else
        v = (double)size * WINDOW * (double)iters * (t == T_BIBW ? 2.0 : 1.0) / el / 1e6;
    return v;
}

int main(int argc, char **argv)
{
    int nranks;
    struct opts o;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    parse_args(argc, argv, &o);
    if (nranks != 2)
        die("needs exactly 2 ranks (got %s)", nranks == 1 ? "1" : "more than 2");
    if (o.max_bytes > (size_t)INT32_MAX)
        die("-m is larger than one MPI_BYTE count can express (%s)", "max 2147483647");

    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        page = 4096;
    unsigned char **bufs[] = { &bulk, &vsend, &rbuf, &vrecv };
    for (size_t b = 0; b < sizeof bufs / sizeof bufs[0]; b++) {
        void *p;
        if (posix_memalign(&p, (size_t)page, o.max_bytes) != 0) {
            fprintf(stderr, "ibmc_pt2pt_bench: rank %d: cannot allocate %zu bytes\n", rank,
                    o.max_bytes);
            MPI_Abort(MPI_COMM_WORLD, 5);
        }
        memset(p, 0, o.max_bytes); /* touch the pages before any timing */
        *bufs[b] = p;
    }

    if (rank == 0) {
        printf("# ibmc_pt2pt_bench %s\n", test_names[o.test]);
        printf("# Size  %s\n", o.test == T_LATENCY ? "Latency (us)"
                               : o.test == T_BW    ? "Bandwidth (MB/s)"
                                                   : "Bi-Bandwidth (MB/s)");
        fflush(stdout);
    }
    for (size_t size = 1; size <= o.max_bytes; size *= 2) {
        double v = run_size(&o, size);
        if (rank == 0) {
            printf("%-10zu%16.2f\n", size, v);
            fflush(stdout);
        }
    }

    free(bulk);
    free(vsend);
    free(rbuf);
    free(vrecv);
    MPI_Finalize();
    return 0;
}
