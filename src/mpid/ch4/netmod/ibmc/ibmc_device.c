/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Finding the HCA, port and GID this process uses: gather the facts through
 * verbs and hwloc, let ibmc_devsel.c decide, then open the choice. */

#include <mpidimpl.h>
#include <limits.h>
#include <stdlib.h>
#include "ibmc_types.h"
#include "ibmc_devsel.h"
#include "ibmc_device.h"

/* Is the device attached close to the cores this process is bound to?
 * Virtual devices (Soft-RoCE) have no PCI parent and count as not near. */
static int device_is_near(struct ibv_device *dev)
{
    char path[PATH_MAX], real[PATH_MAX];
    unsigned domain, bus, slot, func;

    snprintf(path, sizeof(path), "%s/device", dev->ibdev_path);
    if (!realpath(path, real))
        return 0;
    const char *base = strrchr(real, '/');
    base = base ? base + 1 : real;
    if (sscanf(base, "%x:%x:%x.%x", &domain, &bus, &slot, &func) != 4)
        return 0;
    return MPIR_hwtopo_is_dev_close_by_pci((int) domain, (int) bus, (int) slot, (int) func);
}

static void describe_device(struct ibv_device *dev, struct ibv_context *ctx,
                            ibmc_dev_info_t * info)
{
    struct ibv_device_attr dattr;

    memset(info, 0, sizeof(*info));
    MPL_strncpy(info->name, ibv_get_device_name(dev), sizeof(info->name));
    info->near = device_is_near(dev);
    if (ibv_query_device(ctx, &dattr))
        return;
    for (int p = 1; p <= dattr.phys_port_cnt && info->num_ports < IBMC_DEVSEL_MAX_PORTS; p++) {
        struct ibv_port_attr pattr;
        if (ibv_query_port(ctx, (uint8_t) p, &pattr))
            continue;
        ibmc_port_info_t *pi = &info->ports[info->num_ports++];
        pi->port_num = p;
        pi->active = pattr.state == IBV_PORT_ACTIVE;
        pi->link_layer = pattr.link_layer;
    }
}

static int list_gids(struct ibv_context *ctx, int port, int tbl_len, ibmc_gid_info_t ** out)
{
    int n = 0;
    ibmc_gid_info_t *gids = MPL_malloc(sizeof(*gids) * (tbl_len > 0 ? tbl_len : 1), MPL_MEM_OTHER);
    if (!gids)
        return -1;
    for (int i = 0; i < tbl_len; i++) {
        struct ibv_gid_entry entry;
        static const uint8_t zero[16];
        if (ibv_query_gid_ex(ctx, (uint32_t) port, (uint32_t) i, &entry, 0))
            continue;
        if (!memcmp(entry.gid.raw, zero, 16))
            continue;
        gids[n].index = i;
        gids[n].type = entry.gid_type == IBV_GID_TYPE_ROCE_V2 ? IBMC_GID_ROCE_V2 :
            entry.gid_type == IBV_GID_TYPE_ROCE_V1 ? IBMC_GID_ROCE_V1 : IBMC_GID_IB;
        memcpy(gids[n].raw, entry.gid.raw, 16);
        n++;
    }
    *out = gids;
    return n;
}

int MPIDI_IBMC_device_open(ibmc_hca_t * hca, char *name, size_t name_len)
{
    int mpi_errno = MPI_SUCCESS;
    struct ibv_device **list = NULL;
    struct ibv_context **ctxs = NULL;
    ibmc_dev_info_t *infos = NULL;
    ibmc_gid_info_t *gids = NULL;
    int ndev = 0, chosen = -1, port = 0;
    char why[512];

    list = ibv_get_device_list(&ndev);
    if (!list)
        ndev = 0;

    if (ndev > 0) {
        ctxs = MPL_calloc(ndev, sizeof(*ctxs), MPL_MEM_OTHER);
        infos = MPL_calloc(ndev, sizeof(*infos), MPL_MEM_OTHER);
        MPIR_ERR_CHKANDJUMP(!ctxs || !infos, mpi_errno, MPI_ERR_OTHER, "**nomem");
    }
    for (int d = 0; d < ndev; d++) {
        ctxs[d] = ibv_open_device(list[d]);
        if (ctxs[d]) {
            describe_device(list[d], ctxs[d], &infos[d]);
        } else {
            MPL_strncpy(infos[d].name, ibv_get_device_name(list[d]), sizeof(infos[d].name));
        }
    }

    if (ibmc_devsel_choose(infos, ndev, MPIR_CVAR_IBMC_DEVICE, MPIR_CVAR_IBMC_PORT,
                           &chosen, &port, why, sizeof(why))) {
        MPIR_ERR_SETANDJUMP1(mpi_errno, MPI_ERR_OTHER, "**ibmc_nodev", "**ibmc_nodev %s", why);
    }
    MPIR_ERR_CHKANDJUMP1(!ctxs[chosen], mpi_errno, MPI_ERR_OTHER, "**ibmc_nodev",
                         "**ibmc_nodev %s", "the chosen device could not be opened");

    hca->ctx = ctxs[chosen];
    ctxs[chosen] = NULL;
    hca->port = port;
    MPL_strncpy(name, infos[chosen].name, name_len);

    struct ibv_port_attr pattr;
    if (ibv_query_device(hca->ctx, &hca->dev_attr) ||
        ibv_query_port(hca->ctx, (uint8_t) port, &pattr)) {
        mpi_errno = MPIDI_IBMC_VERBS_ERROR("ibv_query_device/ibv_query_port", errno);
        goto fn_fail;
    }
    hca->link_layer = pattr.link_layer;
    hca->active_mtu = pattr.active_mtu;
    hca->lid = pattr.lid;

    int ngids = list_gids(hca->ctx, port, pattr.gid_tbl_len, &gids);
    MPIR_ERR_CHKANDJUMP(ngids < 0, mpi_errno, MPI_ERR_OTHER, "**nomem");
    if (ibmc_devsel_gid(gids, ngids, hca->link_layer, MPIR_CVAR_IBMC_GID_INDEX,
                        &hca->gid_index, why, sizeof(why))) {
        char msg[640];
        snprintf(msg, sizeof(msg), "%s port %d: %s (MPIR_CVAR_IBMC_GID_INDEX)", name, port, why);
        MPIR_ERR_SETANDJUMP1(mpi_errno, MPI_ERR_OTHER, "**ibmc_nodev", "**ibmc_nodev %s", msg);
    }
    for (int i = 0; i < ngids; i++) {
        if (gids[i].index == hca->gid_index)
            memcpy(hca->gid.raw, gids[i].raw, 16);
    }

  fn_exit:
    for (int d = 0; d < ndev; d++) {
        if (ctxs && ctxs[d])
            ibv_close_device(ctxs[d]);
    }
    MPL_free(ctxs);
    MPL_free(infos);
    MPL_free(gids);
    if (list)
        ibv_free_device_list(list);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
