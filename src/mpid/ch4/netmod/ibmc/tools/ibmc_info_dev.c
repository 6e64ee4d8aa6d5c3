/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* ibmc_info: every RDMA device and port, and the device, port and GID that
 * ibmc would pick for this process, with the reasons.  The facts are
 * gathered as ibmc_device.c gathers them (verbs for ports and GIDs, hwloc
 * for nearness, in the same way as MPICH's MPIR_hwtopo_is_dev_close_by_pci)
 * and the decision is made by the netmod's own ibmc_devsel.c, so what is
 * printed here is what MPI_Init would do in a process started from the same
 * environment with the same CPU binding. */

#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <hwloc.h>
#include "ibmc_info.h"

typedef struct {
    int ok;                     /* ibv_query_port worked */
    struct ibv_port_attr attr;
    int ngids;
    ibmc_gid_info_t *gids;      /* populated entries, as ibmc_device.c lists them */
    char (*netdev)[IF_NAMESIZE];        /* per entry of gids; "" if none */
} portrec_t;

typedef struct {
    struct ibv_context *ctx;
    int open_err;               /* errno of ibv_open_device, if it failed */
    int attr_ok;
    struct ibv_device_attr attr;
    char pci[64];               /* PCI address, or "" */
    char near_why[512];
    int nports;                 /* ports looked at (as many as ibmc looks at) */
    portrec_t *port;            /* by port number - 1, phys_port_cnt of them */
} devrec_t;

/* The hardware topology and this process's binding, as MPICH's
 * MPII_hwtopo_init loads them.  topo_ok 0 means hwloc failed, and then
 * MPICH counts no device as near. */
static hwloc_topology_t topo;
static hwloc_bitmap_t bindset;
static int topo_ok;
static char topo_why[128];

static void topo_init(void)
{
    bindset = hwloc_bitmap_alloc();
    if (hwloc_topology_init(&topo)) {
        snprintf(topo_why, sizeof(topo_why), "hwloc_topology_init failed: %s", strerror(errno));
        return;
    }
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (hwloc_topology_load(topo)) {
        snprintf(topo_why, sizeof(topo_why), "hwloc_topology_load failed: %s", strerror(errno));
        return;
    }
    if (hwloc_get_proc_cpubind(topo, getpid(), bindset, HWLOC_CPUBIND_PROCESS)) {
        snprintf(topo_why, sizeof(topo_why), "hwloc_get_proc_cpubind failed: %s",
                 strerror(errno));
        return;
    }
    topo_ok = 1;
}

static void topo_done(void)
{
    if (topo)
        hwloc_topology_destroy(topo);
    hwloc_bitmap_free(bindset);
}

/* Is the device attached close to the cores this process is bound to?  The
 * rule of ibmc_device.c's device_is_near: a device with no PCI parent
 * (Soft-RoCE) is not near.  Sets d->pci and d->near_why. */
static int device_is_near(struct ibv_device *ibdev, devrec_t * d)
{
    char path[PATH_MAX], real[PATH_MAX];
    unsigned domain, bus, slot, func;

    snprintf(path, sizeof(path), "%s/device", ibdev->ibdev_path);
    if (!realpath(path, real)) {
        snprintf(d->near_why, sizeof(d->near_why), "no: %.300s does not exist (a virtual "
                 "device such as Soft-RoCE has no parent device)", path);
        return 0;
    }
    const char *base = strrchr(real, '/');
    base = base ? base + 1 : real;
    if (sscanf(base, "%x:%x:%x.%x", &domain, &bus, &slot, &func) != 4) {
        snprintf(d->near_why, sizeof(d->near_why), "no: its parent device %.300s is not a "
                 "PCI device (virtual devices such as Soft-RoCE count as not near)", real);
        return 0;
    }
    snprintf(d->pci, sizeof(d->pci), "%.63s", base);
    if (!topo_ok) {
        snprintf(d->near_why, sizeof(d->near_why), "no: %s, so no device counts as near",
                 topo_why);
        return 0;
    }
    hwloc_obj_t io = hwloc_get_pcidev_by_busid(topo, domain, bus, slot, func);
    hwloc_obj_t anc = io ? hwloc_get_non_io_ancestor_obj(topo, io) : NULL;
    if (!anc) {
        snprintf(d->near_why, sizeof(d->near_why), "no: hwloc does not know PCI device %s",
                 d->pci);
        return 0;
    }
    char *dev_cpus = NULL, *my_cpus = NULL;
    hwloc_bitmap_list_asprintf(&dev_cpus, anc->cpuset);
    hwloc_bitmap_list_asprintf(&my_cpus, bindset);
    int near = hwloc_bitmap_isincluded(bindset, anc->cpuset) ||
        hwloc_bitmap_isincluded(anc->cpuset, bindset);
    snprintf(d->near_why, sizeof(d->near_why), "%s: attached to %s L#%u (cpus %s); this "
             "process is bound to cpus %s", near ? "yes" : "no",
             hwloc_obj_type_string(anc->type), anc->logical_index,
             dev_cpus ? dev_cpus : "?", my_cpus ? my_cpus : "?");
    free(dev_cpus);
    free(my_cpus);
    return near;
}

/* The netdev of a RoCE GID: verbs reports its ifindex; older kernels only
 * have it in sysfs. */
static void gid_netdev(const char *dev, int port, int index, uint32_t ifindex, char *buf)
{
    buf[0] = '\0';
    if (ifindex && if_indextoname(ifindex, buf))
        return;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gid_attrs/ndevs/%d", dev,
             port, index);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (fgets(buf, IF_NAMESIZE, f))
        buf[strcspn(buf, "\n")] = '\0';
    else
        buf[0] = '\0';
    fclose(f);
}

/* The populated entries of a port's GID table, as ibmc_device.c's
 * list_gids reads them. */
static int list_gids(struct ibv_context *ctx, const char *dev, int port, portrec_t * p)
{
    static const uint8_t zero[16];
    int len = p->attr.gid_tbl_len > 0 ? p->attr.gid_tbl_len : 1;

    p->gids = calloc((size_t) len, sizeof(*p->gids));
    p->netdev = calloc((size_t) len, sizeof(*p->netdev));
    if (!p->gids || !p->netdev)
        return -1;
    for (int i = 0; i < p->attr.gid_tbl_len; i++) {
        struct ibv_gid_entry entry;
        if (ibv_query_gid_ex(ctx, (uint32_t) port, (uint32_t) i, &entry, 0))
            continue;
        if (!memcmp(entry.gid.raw, zero, 16))
            continue;
        ibmc_gid_info_t *g = &p->gids[p->ngids];
        g->index = i;
        g->type = entry.gid_type == IBV_GID_TYPE_ROCE_V2 ? IBMC_GID_ROCE_V2 :
            entry.gid_type == IBV_GID_TYPE_ROCE_V1 ? IBMC_GID_ROCE_V1 : IBMC_GID_IB;
        memcpy(g->raw, entry.gid.raw, 16);
        gid_netdev(dev, port, i, entry.ndev_ifindex, p->netdev[p->ngids]);
        p->ngids++;
    }
    return 0;
}

/* Fills `info` as ibmc_device.c's describe_device does, plus what the
 * listing shows. */
static void describe(struct ibv_device *ibdev, devrec_t * d, ibmc_dev_info_t * info)
{
    memset(info, 0, sizeof(*info));
    snprintf(info->name, sizeof(info->name), "%s", ibv_get_device_name(ibdev));
    info->near = device_is_near(ibdev, d);
    if (!d->ctx)
        return;
    if (ibv_query_device(d->ctx, &d->attr))
        return;
    d->attr_ok = 1;
    d->port = calloc(d->attr.phys_port_cnt, sizeof(*d->port));
    if (!d->port)
        return;
    for (int p = 1; p <= d->attr.phys_port_cnt && info->num_ports < IBMC_DEVSEL_MAX_PORTS; p++) {
        portrec_t *pt = &d->port[p - 1];
        d->nports = p;
        if (ibv_query_port(d->ctx, (uint8_t) p, &pt->attr))
            continue;
        pt->ok = 1;
        ibmc_port_info_t *pi = &info->ports[info->num_ports++];
        pi->port_num = p;
        pi->active = pt->attr.state == IBV_PORT_ACTIVE;
        pi->link_layer = pt->attr.link_layer;
        if (list_gids(d->ctx, info->name, p, pt))
            pt->ngids = 0;
    }
}

static const char *link_layer_str(int ll)
{
    switch (ll) {
        case IBV_LINK_LAYER_INFINIBAND:
            return "InfiniBand";
        case IBV_LINK_LAYER_ETHERNET:
            return "Ethernet (RoCE)";
        default:
            return "unspecified (InfiniBand)";
    }
}

static const char *phys_state_str(uint8_t s)
{
    static const char *const names[] = { "no state change", "Sleep", "Polling", "Disabled",
        "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest"
    };
    return s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

static int mtu_bytes(enum ibv_mtu m)
{
    return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128 << m : 0;
}

static void print_device(struct ibv_device *ibdev, const devrec_t * d, const ibmc_dev_info_t * info)
{
    printf("device %s\n", info->name);
    if (!d->ctx) {
        printf("    cannot open it: ibv_open_device failed: %s; ibmc skips it\n",
               strerror(d->open_err));
        return;
    }
    if (!d->attr_ok) {
        printf("    ibv_query_device failed; ibmc sees no ports on it\n");
        return;
    }
    uint64_t guid = be64toh(d->attr.node_guid);
    printf("    node GUID     %04x:%04x:%04x:%04x\n", (unsigned) (guid >> 48) & 0xffff,
           (unsigned) (guid >> 32) & 0xffff, (unsigned) (guid >> 16) & 0xffff,
           (unsigned) guid & 0xffff);
    printf("    firmware      %s\n", d->attr.fw_ver[0] ? d->attr.fw_ver : "(none)");
    printf("    sysfs         %s\n", ibdev->ibdev_path);
    printf("    PCI           %s\n", d->pci[0] ? d->pci : "none");
    info_say("    near          ", "%s", d->near_why);
    if (d->nports < d->attr.phys_port_cnt)
        printf("    (%d ports; ibmc considers the first %d that answer)\n",
               d->attr.phys_port_cnt, IBMC_DEVSEL_MAX_PORTS);
    for (int p = 0; p < d->nports; p++) {
        const portrec_t *pt = &d->port[p];
        printf("    port %d\n", p + 1);
        if (!pt->ok) {
            printf("        ibv_query_port failed; ibmc skips this port\n");
            continue;
        }
        printf("        state        %s (physical: %s)\n", ibv_port_state_str(pt->attr.state),
               phys_state_str(pt->attr.phys_state));
        printf("        link layer   %s\n", link_layer_str(pt->attr.link_layer));
        printf("        MTU          active %d, max %d\n", mtu_bytes(pt->attr.active_mtu),
               mtu_bytes(pt->attr.max_mtu));
        if (pt->attr.link_layer != IBV_LINK_LAYER_ETHERNET)
            printf("        LID          %#x (subnet manager at LID %#x)\n", pt->attr.lid,
                   pt->attr.sm_lid);
        printf("        GIDs         %d of %d entries populated\n", pt->ngids,
               pt->attr.gid_tbl_len);
        for (int i = 0; i < pt->ngids; i++) {
            char s[INET6_ADDRSTRLEN];
            info_gid_str(pt->gids[i].raw, s, sizeof(s));
            printf("            [%3d] %-40s %-8s %s\n", pt->gids[i].index, s,
                   info_gid_type_str(pt->gids[i].type), pt->netdev[i]);
        }
    }
}

static int is_ipv4_mapped(const uint8_t * g)
{
    static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    return !memcmp(g, prefix, sizeof(prefix));
}

/* Why ibmc_devsel_choose picked this device and port, in words. */
static void explain_device(const ibmc_dev_info_t * infos, int ndev, int chosen, int port,
                           const info_cvars_t * cv)
{
    if (cv->device[0]) {
        info_say("    why         ", "named by MPIR_CVAR_IBMC_DEVICE");
    } else if (infos[chosen].near) {
        info_say("    why         ", "MPIR_CVAR_IBMC_DEVICE is empty, so the nearest device: "
                 "%s is near this process's cores and has an active port", infos[chosen].name);
    } else {
        int nnear = 0;
        for (int d = 0; d < ndev; d++)
            nnear += infos[d].near;
        info_say("    why         ", "MPIR_CVAR_IBMC_DEVICE is empty, so the nearest device; "
                 "%s, so the first device in verbs' order that has an active port",
                 nnear ? "no near device has a usable port" :
                 "no device is near this process's cores (see \"near\" above)");
    }
    if (cv->port)
        printf("                port %d set by MPIR_CVAR_IBMC_PORT\n", port);
    else
        printf("                port %d: the device's first active port "
               "(MPIR_CVAR_IBMC_PORT is 0)\n", port);
}

/* Why ibmc_devsel_gid picked this GID, in words. */
static void explain_gid(const ibmc_gid_info_t * g, int link_layer, const info_cvars_t * cv)
{
    const char *why;
    if (cv->gid_index >= 0)
        why = "set by MPIR_CVAR_IBMC_GID_INDEX";
    else if (link_layer != IBMC_LL_ETHERNET)
        why = "InfiniBand: the port GID, index 0 (MPIR_CVAR_IBMC_GID_INDEX is -1)";
    else if (g->type == IBMC_GID_ROCE_V2 && is_ipv4_mapped(g->raw))
        why = "RoCE v2 mapping an IPv4 address: ibmc's first preference on Ethernet "
            "(routable, and what rdma_cm uses)";
    else if (g->type == IBMC_GID_ROCE_V2 && g->raw[0] == 0xfe && (g->raw[1] & 0xc0) == 0x80)
        why = "a link-local RoCE v2 GID: the port has no RoCE v2 GID mapping an IPv4 "
            "address, and no global one";
    else if (g->type == IBMC_GID_ROCE_V2)
        why = "a RoCE v2 GID: the port has none that maps an IPv4 address";
    else
        why = "RoCE v1: the port has no RoCE v2 GID (RoCE v1 does not cross IP routers)";
    info_say("    why         ", "%s", why);
}

int info_devices(int print, const info_cvars_t * cv, info_pick_t * pick, int *picked)
{
    struct ibv_device **list;
    devrec_t *devs = NULL;
    ibmc_dev_info_t *infos = NULL;
    int ndev = 0, chosen = -1, port = 0, gid_index = -1;
    char why[512];

    *picked = 0;
    memset(pick, 0, sizeof(*pick));
    errno = 0;
    list = ibv_get_device_list(&ndev);
    int list_err = list ? 0 : errno;
    if (!list)
        ndev = 0;
    if (print) {
        printf("# RDMA devices\n");
        if (list_err == ENOSYS) {
            printf("    none: this host has no RDMA devices\n");
            info_say("    ", "(ibv_get_device_list failed: %s: the kernel offers no RDMA "
                     "interface, /sys/class/infiniband_verbs is missing; load the HCA's "
                     "driver, or rdma_rxe for Soft-RoCE, and ib_uverbs)", strerror(list_err));
        } else if (list_err) {
            printf("    none: ibv_get_device_list failed: %s\n", strerror(list_err));
        } else if (ndev == 0) {
            printf("    none: this host has no RDMA devices\n");
            info_say("    ", "(ibv_get_device_list found none: no RDMA driver has a device, or "
                     "its provider library is not installed; for Soft-RoCE: rdma link add "
                     "rxe0 type rxe netdev NETDEV)");
        }
    }

    topo_init();
    if (ndev > 0) {
        devs = calloc((size_t) ndev, sizeof(*devs));
        infos = calloc((size_t) ndev, sizeof(*infos));
        if (!devs || !infos) {
            printf("    out of memory\n");
            ndev = 0;
        }
    }
    for (int d = 0; d < ndev; d++) {
        errno = 0;
        devs[d].ctx = ibv_open_device(list[d]);
        if (!devs[d].ctx)
            devs[d].open_err = errno ? errno : ENODEV;
        describe(list[d], &devs[d], &infos[d]);
        if (print)
            print_device(list[d], &devs[d], &infos[d]);
    }

    if (print) {
        printf("\n# ibmc's choice for this process\n");
        if (topo_ok) {
            char *cpus = NULL;
            hwloc_bitmap_list_asprintf(&cpus, bindset);
            info_say("    binding     ", "this process may run on cpus %s (hwloc); under "
                     "mpiexec, each rank's binding decides which devices are near",
                     cpus ? cpus : "?");
            free(cpus);
        } else {
            info_say("    binding     ", "unknown: %s; ibmc then counts no device as near",
                     topo_why);
        }
    }
    if (ibmc_devsel_choose(infos, ndev, cv->device, cv->port, &chosen, &port, why, sizeof(why))) {
        info_say("    none: ", "%s", why);
        if (ndev > 0)
            printf("    (MPIR_CVAR_IBMC_DEVICE=\"%s\", MPIR_CVAR_IBMC_PORT=%d)\n", cv->device,
                   cv->port);
        printf("    MPI_Init with ch4:ibmc fails on this host for that reason\n");
        goto done;
    }
    if (!devs[chosen].ctx) {
        printf("    none: ibmc picks %s, but that device could not be opened\n",
               infos[chosen].name);
        printf("    MPI_Init with ch4:ibmc fails on this host for that reason\n");
        goto done;
    }
    const portrec_t *pt = &devs[chosen].port[port - 1];
    if (print) {
        printf("    device      %s port %d\n", infos[chosen].name, port);
        explain_device(infos, ndev, chosen, port, cv);
    }
    if (ibmc_devsel_gid(pt->gids, pt->ngids, pt->attr.link_layer, cv->gid_index, &gid_index,
                        why, sizeof(why))) {
        info_say("    GID         ", "none: %s port %d: %s (MPIR_CVAR_IBMC_GID_INDEX=%d)",
                 infos[chosen].name, port, why, cv->gid_index);
        printf("    MPI_Init with ch4:ibmc fails on this host for that reason\n");
        goto done;
    }
    for (int i = 0; i < pt->ngids; i++) {
        if (pt->gids[i].index != gid_index)
            continue;
        snprintf(pick->dev_name, sizeof(pick->dev_name), "%s", infos[chosen].name);
        pick->port = port;
        pick->link_layer = pt->attr.link_layer;
        pick->gid_index = gid_index;
        pick->gid_type = pt->gids[i].type;
        memcpy(pick->gid, pt->gids[i].raw, 16);
        *picked = 1;
        char s[INET6_ADDRSTRLEN];
        info_gid_str(pick->gid, s, sizeof(s));
        if (print) {
            printf("    GID         [%d] %s, %s%s%s\n", gid_index, s,
                   info_gid_type_str(pick->gid_type), pt->netdev[i][0] ? ", netdev " : "",
                   pt->netdev[i]);
            explain_gid(&pt->gids[i], pick->link_layer, cv);
        } else {
            printf("    using       %s port %d, GID [%d] %s (%s)\n", pick->dev_name, port,
                   gid_index, s, info_gid_type_str(pick->gid_type));
        }
    }

  done:
    for (int d = 0; d < ndev; d++) {
        for (int p = 0; p < devs[d].nports; p++) {
            free(devs[d].port[p].gids);
            free(devs[d].port[p].netdev);
        }
        free(devs[d].port);
        if (devs[d].ctx)
            ibv_close_device(devs[d].ctx);
    }
    free(devs);
    free(infos);
    if (list)
        ibv_free_device_list(list);
    topo_done();
    return ndev;
}
