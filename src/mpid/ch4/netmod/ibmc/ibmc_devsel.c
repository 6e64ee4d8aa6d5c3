/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <stdio.h>
#include <string.h>
#include "ibmc_devsel.h"

static void list_names(const ibmc_dev_info_t * devs, int ndevs, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < ndevs && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", devs[i].name);
        if (n < 0)
            break;
        used += (size_t) n;
    }
}

static const ibmc_port_info_t *find_port(const ibmc_dev_info_t * dev, int want_port)
{
    for (int p = 0; p < dev->num_ports; p++) {
        if (want_port ? dev->ports[p].port_num == want_port : dev->ports[p].active)
            return &dev->ports[p];
    }
    return NULL;
}

int ibmc_devsel_choose(const ibmc_dev_info_t * devs, int ndevs, const char *want_name,
                       int want_port, int *dev_idx, int *port_num, char *why, size_t why_len)
{
    char names[256];

    if (ndevs <= 0) {
        snprintf(why, why_len, "this host has no RDMA devices");
        return -1;
    }
    list_names(devs, ndevs, names, sizeof(names));

    if (want_name && want_name[0]) {
        for (int d = 0; d < ndevs; d++) {
            if (strcmp(devs[d].name, want_name))
                continue;
            const ibmc_port_info_t *p = find_port(&devs[d], want_port);
            if (!p) {
                if (want_port)
                    snprintf(why, why_len, "device %s has no port %d", want_name, want_port);
                else
                    snprintf(why, why_len, "device %s has no active port", want_name);
                return -1;
            }
            if (!p->active) {
                snprintf(why, why_len, "port %d of device %s is not active", want_port,
                         want_name);
                return -1;
            }
            *dev_idx = d;
            *port_num = p->port_num;
            return 0;
        }
        snprintf(why, why_len, "device \"%s\" does not exist (this host has: %s)", want_name,
                 names);
        return -1;
    }

    /* Nearest device first, then in the order verbs lists them. */
    for (int pass = 0; pass < 2; pass++) {
        for (int d = 0; d < ndevs; d++) {
            if (pass == 0 && !devs[d].near)
                continue;
            const ibmc_port_info_t *p = find_port(&devs[d], want_port);
            if (p && p->active) {
                *dev_idx = d;
                *port_num = p->port_num;
                return 0;
            }
        }
    }
    if (want_port)
        snprintf(why, why_len, "no device has an active port %d (this host has: %s)", want_port,
                 names);
    else
        snprintf(why, why_len, "no device has an active port (this host has: %s)", names);
    return -1;
}

static int is_ipv4_mapped(const uint8_t * g)
{
    static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    return memcmp(g, prefix, sizeof(prefix)) == 0;
}

static int is_link_local(const uint8_t * g)
{
    return g[0] == 0xfe && (g[1] & 0xc0) == 0x80;
}

/* Higher is better; 0 is unusable on Ethernet. */
static int roce_rank(const ibmc_gid_info_t * g)
{
    if (g->type == IBMC_GID_ROCE_V2) {
        if (is_ipv4_mapped(g->raw))
            return 4;
        return is_link_local(g->raw) ? 2 : 3;
    }
    if (g->type == IBMC_GID_ROCE_V1)
        return 1;
    return 0;
}

int ibmc_devsel_gid(const ibmc_gid_info_t * gids, int ngids, int link_layer, int want_index,
                    int *gid_index, char *why, size_t why_len)
{
    if (want_index >= 0) {
        for (int i = 0; i < ngids; i++) {
            if (gids[i].index == want_index) {
                *gid_index = want_index;
                return 0;
            }
        }
        snprintf(why, why_len, "GID index %d is not populated on this port", want_index);
        return -1;
    }

    if (link_layer != IBMC_LL_ETHERNET) {
        for (int i = 0; i < ngids; i++) {
            if (gids[i].index == 0) {
                *gid_index = 0;
                return 0;
            }
        }
        snprintf(why, why_len, "the port has no GID at index 0");
        return -1;
    }

    int best = -1, best_rank = 0;
    for (int i = 0; i < ngids; i++) {
        int r = roce_rank(&gids[i]);
        if (r > best_rank) {
            best_rank = r;
            best = i;
        }
    }
    if (best < 0) {
        snprintf(why, why_len, "the RoCE port has no usable GID (is an IP address configured "
                 "on its network interface?)");
        return -1;
    }
    *gid_index = gids[best].index;
    return 0;
}
