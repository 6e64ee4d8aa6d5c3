/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Choosing the device, port and GID that a process uses, from facts that
 * ibmc_device.c gathers through verbs and hwloc.  Pure logic, so the rules
 * and their error messages are unit-tested without a device. */

#ifndef IBMC_DEVSEL_H_INCLUDED
#define IBMC_DEVSEL_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define IBMC_DEVSEL_MAX_PORTS 8
#define IBMC_DEVSEL_NAME_LEN 64

/* Values of the link layer, equal to IBV_LINK_LAYER_*. */
enum {
    IBMC_LL_UNSPECIFIED = 0,
    IBMC_LL_INFINIBAND = 1,
    IBMC_LL_ETHERNET = 2
};

/* Values of a GID's type. */
enum {
    IBMC_GID_IB = 0,
    IBMC_GID_ROCE_V1 = 1,
    IBMC_GID_ROCE_V2 = 2
};

typedef struct {
    int port_num;               /* 1-based, as verbs numbers ports */
    int active;
    int link_layer;             /* IBMC_LL_* */
} ibmc_port_info_t;

typedef struct {
    char name[IBMC_DEVSEL_NAME_LEN];
    int near;                   /* hwloc: attached close to this process's cores */
    int num_ports;
    ibmc_port_info_t ports[IBMC_DEVSEL_MAX_PORTS];
} ibmc_dev_info_t;

typedef struct {
    int index;
    int type;                   /* IBMC_GID_* */
    uint8_t raw[16];
} ibmc_gid_info_t;

/* Pick a device and port.  want_name "" means any device (nearest first);
 * want_port 0 means the first active port.  Returns 0 and sets *dev_idx and
 * *port_num, or -1 with a reason in `why`. */
int ibmc_devsel_choose(const ibmc_dev_info_t * devs, int ndevs, const char *want_name,
                       int want_port, int *dev_idx, int *port_num, char *why, size_t why_len);

/* Pick the GID index for a port.  `gids` lists the populated entries of the
 * port's table.  want_index -1 means automatic: index 0 on InfiniBand; on
 * Ethernet a RoCE v2 GID, preferring an IPv4-mapped one (routable, and what
 * rdma_cm uses), then any RoCE v2, then RoCE v1.  Returns 0 or -1 with `why`. */
int ibmc_devsel_gid(const ibmc_gid_info_t * gids, int ngids, int link_layer, int want_index,
                    int *gid_index, char *why, size_t why_len);

#endif /* IBMC_DEVSEL_H_INCLUDED */
