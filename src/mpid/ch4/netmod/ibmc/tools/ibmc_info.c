/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* ibmc_info: what the ch4:ibmc netmod finds on this host, in the spirit of
 * `ucx_info -d` and `ibv_devinfo`.  It prints
 *   - the ibmc CVARs in force, read through MPI_T from the MPI library the
 *     program is linked with, without MPI_Init (ibmc_info_cvars.c);
 *   - every RDMA device and port: link layer, state, MTU, the GID table with
 *     each GID's type and netdev (ibmc_info_dev.c);
 *   - the device, port and GID ibmc would pick for this process and why,
 *     decided by the netmod's own ibmc_devsel.c (ibmc_info_dev.c);
 *   - a multicast check: join a group through rdma_cm as ibmc's multicast
 *     channel does, send a probe to it, receive it, leave
 *     (ibmc_info_mcast.c).
 * Run it where an MPI process would run (same environment, same binding) to
 * see what MPI_Init with ch4:ibmc would do there.  --help lists the options
 * and the exit statuses. */

#define _GNU_SOURCE
#include <mpi.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "ibmc_info.h"

/* Each step of the check may take this long in the full report; -m waits
 * as long as ibmc does (MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT). */
#define DEFAULT_CHECK_TIMEOUT 3.0

static void usage(FILE * f, const char *prog)
{
    fprintf(f,
            "usage: %s [-m] [-g GROUP] [-t SECONDS]\n"
            "\n"
            "Shows what the ch4:ibmc netmod of MPICH finds on this host: the ibmc CVARs in\n"
            "force (read through MPI_T, without MPI_Init), every RDMA device and port with\n"
            "its GID table, the device, port and GID ibmc would pick for this process and\n"
            "why, and a multicast check: join a group through rdma_cm on that port, send a\n"
            "probe datagram to the group, receive it back, leave.  Run it with the\n"
            "environment (MPIR_CVAR_* variables) and CPU binding of an MPI process.\n"
            "\n"
            "options:\n"
            "  -m          the multicast check only (with the device line it runs on);\n"
            "              each step may take MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT seconds\n"
            "  -g GROUP    multicast group address for the check, IPv4 or IPv6 (default:\n"
            "              239.a.b.c derived from the pid and the time)\n"
            "  -t SECONDS  time allowed for each step of the check (default %g in the full\n"
            "              report; with -m, MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT)\n"
            "  -h, --help  this text\n"
            "\n"
            "exit status:\n"
            "  0  ibmc can use a device here, and the multicast check passed\n"
            "  1  no RDMA device, or none that ibmc can use (the reason is printed);\n"
            "     MPI_Init with ch4:ibmc would fail on this host\n"
            "  2  bad command line\n"
            "  3  the multicast check failed (ibmc's multicast broadcast would fall\n"
            "     back to MPICH's binomial tree)\n"
            "  4  the CVARs could not be read through MPI_T\n"
            "When several apply, the smallest wins.\n", prog, DEFAULT_CHECK_TIMEOUT);
}

#define REPORT_WIDTH 100

void info_say(const char *lead, const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);

    int indent = (int) strlen(lead), room = REPORT_WIDTH - indent;
    const char *p = text;
    if (room < 40)
        room = 40;
    fputs(lead, stdout);
    for (;;) {
        int n = (int) strlen(p);
        if (n > room) {
            /* break at the last blank that fits, or after an overlong word */
            int cut = room;
            while (cut > 0 && p[cut] != ' ')
                cut--;
            if (cut == 0)
                cut = (int) strcspn(p, " ");
            n = cut;
        }
        printf("%.*s\n", n, p);
        p += n;
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        printf("%*s", indent, "");
    }
}

double info_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

const char *info_gid_type_str(int type)
{
    switch (type) {
        case IBMC_GID_ROCE_V1:
            return "RoCE v1";
        case IBMC_GID_ROCE_V2:
            return "RoCE v2";
        default:
            return "IB";
    }
}

void info_gid_str(const uint8_t * raw, char *buf, size_t len)
{
    if (!inet_ntop(AF_INET6, raw, buf, (socklen_t) len))
        snprintf(buf, len, "?");
}

/* Which MPI library answers, and from where: the CVARs are its. */
static void print_library(void)
{
    char s[MPI_MAX_LIBRARY_VERSION_STRING], version[64] = "?", device[64] = "?";
    int n = 0;
    Dl_info dl;

    if (MPI_Get_library_version(s, &n) == MPI_SUCCESS) {
        for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
            if (!strncmp(line, "MPICH Version:", 14))
                snprintf(version, sizeof(version), "%s", line + 14 + strspn(line + 14, " \t"));
            else if (!strncmp(line, "MPICH Device:", 13))
                snprintf(device, sizeof(device), "%s", line + 13 + strspn(line + 13, " \t"));
        }
    }
    /* dladdr wants an object pointer; ISO C has no cast from a function's */
    union {
        int (*fn) (int, int *);
        void *obj;
    } sym = {.fn = MPI_T_init_thread };
    const char *path = dladdr(sym.obj, &dl) && dl.dli_fname ? dl.dli_fname : "?";
    printf("MPI library: MPICH %s, device %s (%s)\n", version, device, path);
    if (strncmp(device, "ch4:ibmc", 8))
        printf("note: this MPICH was not built with ch4:ibmc; ibmc's CVARs will be missing\n");
}

/* The exit status when two outcomes apply: the smallest nonzero one. */
static int worst(int a, int b)
{
    if (!a || !b)
        return a ? a : b;
    return a < b ? a : b;
}

int main(int argc, char **argv)
{
    const char *group = NULL;
    double timeout = 0;
    int mcast_only = 0, rc = INFO_EXIT_OK;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout, argv[0]);
            return INFO_EXIT_OK;
        } else if (!strcmp(a, "-m")) {
            mcast_only = 1;
        } else if (!strcmp(a, "-g") || !strcmp(a, "-t")) {
            if (i + 1 == argc) {
                fprintf(stderr, "%s: %s needs a value (see --help)\n", argv[0], a);
                return INFO_EXIT_USAGE;
            }
            const char *val = argv[++i];
            unsigned char addr[sizeof(struct in6_addr)];
            char *end;
            if (a[1] == 'g') {
                group = val;
                if (inet_pton(AF_INET, val, addr) != 1 && inet_pton(AF_INET6, val, addr) != 1) {
                    fprintf(stderr, "%s: -g wants an IPv4 or IPv6 address (got \"%s\")\n",
                            argv[0], val);
                    return INFO_EXIT_USAGE;
                }
            } else {
                timeout = strtod(val, &end);
                if (end == val || *end || !(timeout > 0) || timeout > 3600) {
                    fprintf(stderr, "%s: -t wants a number of seconds, more than 0 and at "
                            "most 3600 (got \"%s\")\n", argv[0], val);
                    return INFO_EXIT_USAGE;
                }
            }
        } else {
            fprintf(stderr, "%s: unknown argument \"%s\" (see --help)\n", argv[0], a);
            return INFO_EXIT_USAGE;
        }
    }
    /* the report is read as it comes, also through a pipe */
    setvbuf(stdout, NULL, _IOLBF, 0);

    info_cvars_t cv;
    info_pick_t pick;
    int picked;

    print_library();
    if (mcast_only) {
        if (info_cvars_read(0, &cv))
            rc = worst(rc, INFO_EXIT_MPIT);
        if (!cv.read_ok)
            info_say("note: ", "the CVARs could not be read (%s); MPI_Init reads them the same "
                     "way and would fail too; ibmc's defaults are assumed", cv.why);
        if (!(timeout > 0))
            timeout = cv.join_timeout > 0 ? cv.join_timeout : 10;
        printf("\n# Multicast check (rdma_cm; %g s per step)\n", timeout);
        info_devices(0, &cv, &pick, &picked);
    } else {
        printf("\n");
        if (info_cvars_read(1, &cv))
            rc = worst(rc, INFO_EXIT_MPIT);
        printf("\n");
        info_devices(1, &cv, &pick, &picked);
        if (!(timeout > 0))
            timeout = DEFAULT_CHECK_TIMEOUT;
        printf("\n# Multicast check (rdma_cm; %g s per step)\n", timeout);
    }

    if (!picked) {
        printf("    not run: ibmc has no device, port and GID to use\n");
        printf("multicast check: not run\n");
        rc = worst(rc, INFO_EXIT_NODEV);
    } else {
        if (!cv.mcast)
            printf("    note        MPIR_CVAR_IBMC_MCAST is false: ibmc will not use multicast; "
                   "checking anyway\n");
        if (info_mcast_check(&pick, group, timeout))
            rc = worst(rc, INFO_EXIT_MCAST);
    }
    info_cvars_done();

    static const char *const outcome[] = {
        [INFO_EXIT_OK] = "ibmc can run here, multicast included",
        [INFO_EXIT_NODEV] = "ibmc cannot run here: no RDMA device, port and GID it can use",
        [INFO_EXIT_MCAST] = "ibmc can run here, but multicast failed",
        [INFO_EXIT_MPIT] = "the CVARs could not be read through MPI_T",
    };
    printf("\nresult: %s (exit status %d)\n", outcome[rc], rc);
    return rc;
}
