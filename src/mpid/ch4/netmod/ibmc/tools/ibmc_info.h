/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* What the parts of ibmc_info share (the program is described in
 * ibmc_info.c). */

#ifndef IBMC_INFO_H_INCLUDED
#define IBMC_INFO_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "ibmc_devsel.h"

/* Exit statuses; --help documents them.  When several apply, the lowest
 * nonzero one wins, except that 2 (bad command line) stops at once. */
enum {
    INFO_EXIT_OK = 0,
    INFO_EXIT_NODEV = 1,        /* no RDMA device, or none that ibmc can use */
    INFO_EXIT_USAGE = 2,
    INFO_EXIT_MCAST = 3,        /* the multicast check failed */
    INFO_EXIT_MPIT = 4          /* the CVARs could not be read through MPI_T */
};

/* The CVARs that steer the choice of device and the multicast check, as
 * MPI_T reads them (ibmc's defaults if it cannot). */
typedef struct {
    int read_ok;
    char why[256];              /* why not, if !read_ok */
    char device[IBMC_DEVSEL_NAME_LEN];  /* MPIR_CVAR_IBMC_DEVICE */
    int port;                   /* MPIR_CVAR_IBMC_PORT */
    int gid_index;              /* MPIR_CVAR_IBMC_GID_INDEX */
    int mcast;                  /* MPIR_CVAR_IBMC_MCAST */
    int join_timeout;           /* MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT, seconds */
} info_cvars_t;

/* The device, port and GID ibmc would use. */
typedef struct {
    char dev_name[IBMC_DEVSEL_NAME_LEN];
    int port;
    int link_layer;             /* IBMC_LL_* */
    int gid_index;
    int gid_type;               /* IBMC_GID_* */
    uint8_t gid[16];
} info_pick_t;

/* ibmc_info_cvars.c: start MPI_T (no MPI_Init), print the ibmc CVARs if
 * `print`, and fill `cv`.  Returns 0, or -1 if they could not be read (cv
 * then holds the defaults, and the reason is in cv->why and printed if
 * `print`).  May be called again; info_cvars_done ends MPI_T. */
int info_cvars_read(int print, info_cvars_t * cv);
void info_cvars_done(void);

/* ibmc_info_dev.c: list every device and port if `print`, then decide as
 * ibmc would and explain the decision.  Returns the number of devices
 * (0: none), and sets *picked to 1 with `pick` filled, or to 0 with the
 * reason printed. */
int info_devices(int print, const info_cvars_t * cv, info_pick_t * pick, int *picked);

/* ibmc_info_mcast.c: join a multicast group on the picked port through
 * rdma_cm, send a probe to it, receive it, leave.  `group` is the address
 * to use, or NULL for one derived from the pid and the time.  Prints each
 * step; returns 0 on success, -1 on failure (with the failing call). */
int info_mcast_check(const info_pick_t * pick, const char *group, double timeout_s);

/* Helpers shared by the parts (ibmc_info.c).  info_say prints `lead` and
 * the formatted text, wrapped to the report's width with the continuation
 * lines indented as far as `lead`. */
void info_say(const char *lead, const char *fmt, ...) __attribute__ ((format(printf, 2, 3)));
const char *info_gid_type_str(int type);
void info_gid_str(const uint8_t * raw, char *buf, size_t len);
double info_now(void);

#endif /* IBMC_INFO_H_INCLUDED */
