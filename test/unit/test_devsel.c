/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Host unit tests of ibmc_devsel.c: choosing the device, port and GID, and
 * the error messages for choices that cannot be satisfied. */

#include <stdlib.h>
#include <string.h>
#include "ibmc_devsel.h"
#include "tap.h"

#define WHY_LEN 512

/* ---- building device tables ---- */

static ibmc_dev_info_t dev(const char *name, int near)
{
    ibmc_dev_info_t d;
    memset(&d, 0, sizeof(d));
    strncpy(d.name, name, sizeof(d.name) - 1);
    d.near = near;
    return d;
}

static void add_port(ibmc_dev_info_t * d, int port_num, int active, int link_layer)
{
    ibmc_port_info_t *p = &d->ports[d->num_ports++];
    p->port_num = port_num;
    p->active = active;
    p->link_layer = link_layer;
}

/* ---- building GID tables ---- */

static ibmc_gid_info_t gid(int index, int type, const char *kind)
{
    ibmc_gid_info_t g;
    memset(&g, 0, sizeof(g));
    g.index = index;
    g.type = type;
    if (!strcmp(kind, "v4")) {  /* ::ffff:192.168.1.<index> */
        g.raw[10] = 0xff;
        g.raw[11] = 0xff;
        g.raw[12] = 192;
        g.raw[13] = 168;
        g.raw[14] = 1;
        g.raw[15] = (uint8_t) index;
    } else if (!strcmp(kind, "ll")) {   /* fe80::0202:c9ff:fe00:<index> */
        g.raw[0] = 0xfe;
        g.raw[1] = 0x80;
        g.raw[8] = 0x02;
        g.raw[9] = 0x02;
        g.raw[10] = 0xc9;
        g.raw[11] = 0xff;
        g.raw[12] = 0xfe;
        g.raw[15] = (uint8_t) index;
    } else if (!strcmp(kind, "global")) {       /* 2001:db8::<index> */
        g.raw[0] = 0x20;
        g.raw[1] = 0x01;
        g.raw[2] = 0x0d;
        g.raw[3] = 0xb8;
        g.raw[15] = (uint8_t) index;
    } else if (!strcmp(kind, "ib")) {   /* subnet prefix fe80:: + a port GUID */
        g.raw[0] = 0xfe;
        g.raw[1] = 0x80;
        g.raw[8] = 0x00;
        g.raw[9] = 0x02;
        g.raw[10] = 0xc9;
        g.raw[15] = (uint8_t) index;
    }
    return g;
}

/* Runs ibmc_devsel_choose with sentinels in the outputs. */
static int choose(const ibmc_dev_info_t * devs, int ndevs, const char *name, int port,
                  int *dev_idx, int *port_num, char *why)
{
    *dev_idx = -77;
    *port_num = -77;
    memset(why, 0, WHY_LEN);
    return ibmc_devsel_choose(devs, ndevs, name, port, dev_idx, port_num, why, WHY_LEN);
}

static int pick_gid(const ibmc_gid_info_t * g, int n, int ll, int want, int *idx, char *why)
{
    *idx = -77;
    memset(why, 0, WHY_LEN);
    return ibmc_devsel_gid(g, n, ll, want, idx, why, WHY_LEN);
}

int main(void)
{
    char why[WHY_LEN];
    int d, p, g;

    /* ================= device and port ================= */

    TAP_TEST("no devices -> -1, \"no RDMA devices\"") {
        TAP_EXPECT_EQ(choose(NULL, 0, "", 0, &d, &p, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "no RDMA devices");
        TAP_EXPECT(d == -77 && p == -77);
        /* also when a device is asked for by name */
        TAP_EXPECT_EQ(choose(NULL, 0, "mlx5_0", 1, &d, &p, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "no RDMA devices");
    }

    TAP_TEST("named device that does not exist -> names it and lists the others") {
        ibmc_dev_info_t devs[2] = { dev("mlx5_0", 0), dev("rxe0", 1) };
        add_port(&devs[0], 1, 1, IBMC_LL_INFINIBAND);
        add_port(&devs[1], 1, 1, IBMC_LL_ETHERNET);
        TAP_EXPECT_EQ(choose(devs, 2, "mlx5_7", 0, &d, &p, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "mlx5_7");
        TAP_EXPECT_STR_HAS(why, "does not exist");
        TAP_EXPECT_STR_HAS(why, "mlx5_0");
        TAP_EXPECT_STR_HAS(why, "rxe0");
        TAP_EXPECT(d == -77 && p == -77);
        /* a prefix of an existing name is not that name */
        TAP_EXPECT_EQ(choose(devs, 2, "mlx5", 0, &d, &p, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "\"mlx5\"");
    }

    TAP_TEST("named device with its requested port not active -> error") {
        ibmc_dev_info_t devs[1] = { dev("mlx5_0", 1) };
        add_port(&devs[0], 1, 0, IBMC_LL_INFINIBAND);
        add_port(&devs[0], 2, 1, IBMC_LL_INFINIBAND);
        TAP_EXPECT_EQ(choose(devs, 1, "mlx5_0", 1, &d, &p, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "mlx5_0");
        TAP_EXPECT_STR_HAS(why, "port 1");
        TAP_EXPECT_STR_HAS(why, "not active");
        TAP_EXPECT(d == -77 && p == -77);
    }

    TAP_TEST("named device with a nonexistent port -> error") {
        ibmc_dev_info_t devs[1] = { dev("mlx5_0", 1) };
        add_port(&devs[0], 1, 1, IBMC_LL_INFINIBAND);
        TAP_EXPECT_EQ(choose(devs, 1, "mlx5_0", 3, &d, &p, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "mlx5_0");
        TAP_EXPECT_STR_HAS(why, "no port 3");
        TAP_EXPECT(d == -77 && p == -77);
    }

    TAP_TEST("named device without any active port -> error") {
        ibmc_dev_info_t devs[2] = { dev("mlx5_0", 1), dev("mlx5_1", 1) };
        add_port(&devs[0], 1, 0, IBMC_LL_INFINIBAND);
        add_port(&devs[0], 2, 0, IBMC_LL_INFINIBAND);
        add_port(&devs[1], 1, 1, IBMC_LL_INFINIBAND);
        TAP_EXPECT_EQ(choose(devs, 2, "mlx5_0", 0, &d, &p, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "mlx5_0");
        TAP_EXPECT_STR_HAS(why, "no active port");
    }

    TAP_TEST("named device: its first active port, even if another device is near") {
        ibmc_dev_info_t devs[3] = { dev("mlx5_0", 1), dev("mlx5_1", 0), dev("mlx5_2", 1) };
        add_port(&devs[0], 1, 1, IBMC_LL_INFINIBAND);
        add_port(&devs[1], 1, 0, IBMC_LL_INFINIBAND);
        add_port(&devs[1], 2, 1, IBMC_LL_INFINIBAND);
        add_port(&devs[2], 1, 1, IBMC_LL_INFINIBAND);
        TAP_EXPECT_EQ(choose(devs, 3, "mlx5_1", 0, &d, &p, why), 0);
        TAP_EXPECT_EQ(d, 1);
        TAP_EXPECT_EQ(p, 2);
        TAP_EXPECT_EQ(choose(devs, 3, "mlx5_1", 2, &d, &p, why), 0);
        TAP_EXPECT_EQ(d, 1);
        TAP_EXPECT_EQ(p, 2);
        TAP_EXPECT_EQ(choose(devs, 3, "mlx5_2", 1, &d, &p, why), 0);
        TAP_EXPECT_EQ(d, 2);
        TAP_EXPECT_EQ(p, 1);
    }

    TAP_TEST("automatic: a near device with an active port beats an earlier non-near one") {
        ibmc_dev_info_t devs[3] = { dev("mlx5_0", 0), dev("mlx5_1", 1), dev("mlx5_2", 1) };
        add_port(&devs[0], 1, 1, IBMC_LL_INFINIBAND);
        add_port(&devs[1], 1, 1, IBMC_LL_INFINIBAND);
        add_port(&devs[2], 1, 1, IBMC_LL_INFINIBAND);
        TAP_EXPECT_EQ(choose(devs, 3, "", 0, &d, &p, why), 0);
        TAP_EXPECT_EQ(d, 1);    /* the first near one */
        TAP_EXPECT_EQ(p, 1);
        /* NULL name is automatic too */
        TAP_EXPECT_EQ(choose(devs, 3, NULL, 0, &d, &p, why), 0);
        TAP_EXPECT_EQ(d, 1);
    }

    TAP_TEST("automatic: devices without an active port are skipped") {
        /* near but down, far and down, far and up */
        ibmc_dev_info_t devs[3] = { dev("mlx5_0", 1), dev("mlx5_1", 0), dev("mlx5_2", 0) };
        add_port(&devs[0], 1, 0, IBMC_LL_INFINIBAND);
        add_port(&devs[1], 1, 0, IBMC_LL_INFINIBAND);
        add_port(&devs[1], 2, 0, IBMC_LL_INFINIBAND);
        add_port(&devs[2], 1, 0, IBMC_LL_ETHERNET);
        add_port(&devs[2], 2, 1, IBMC_LL_ETHERNET);
        TAP_EXPECT_EQ(choose(devs, 3, "", 0, &d, &p, why), 0);
        TAP_EXPECT_EQ(d, 2);
        TAP_EXPECT_EQ(p, 2);
        /* a device with no ports at all */
        ibmc_dev_info_t two[2] = { dev("empty", 1), dev("ok", 0) };
        add_port(&two[1], 1, 1, IBMC_LL_INFINIBAND);
        TAP_EXPECT_EQ(choose(two, 2, "", 0, &d, &p, why), 0);
        TAP_EXPECT_EQ(d, 1);
        TAP_EXPECT_EQ(p, 1);
    }

    TAP_TEST("automatic: no active port anywhere -> error listing the devices") {
        ibmc_dev_info_t devs[2] = { dev("mlx5_0", 1), dev("mlx5_1", 0) };
        add_port(&devs[0], 1, 0, IBMC_LL_INFINIBAND);
        add_port(&devs[1], 1, 0, IBMC_LL_INFINIBAND);
        TAP_EXPECT_EQ(choose(devs, 2, "", 0, &d, &p, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "no device has an active port");
        TAP_EXPECT_STR_HAS(why, "mlx5_0");
        TAP_EXPECT_STR_HAS(why, "mlx5_1");
        TAP_EXPECT(d == -77 && p == -77);
    }

    TAP_TEST("automatic: want_port selects that port") {
        ibmc_dev_info_t devs[2] = { dev("mlx5_0", 1), dev("mlx5_1", 0) };
        add_port(&devs[0], 1, 1, IBMC_LL_INFINIBAND);
        add_port(&devs[0], 2, 1, IBMC_LL_INFINIBAND);
        add_port(&devs[1], 1, 1, IBMC_LL_INFINIBAND);
        add_port(&devs[1], 2, 1, IBMC_LL_INFINIBAND);
        TAP_EXPECT_EQ(choose(devs, 2, "", 2, &d, &p, why), 0);
        TAP_EXPECT_EQ(d, 0);
        TAP_EXPECT_EQ(p, 2);
        /* the near device's port 2 is down: the far device's port 2 */
        devs[0].ports[1].active = 0;
        TAP_EXPECT_EQ(choose(devs, 2, "", 2, &d, &p, why), 0);
        TAP_EXPECT_EQ(d, 1);
        TAP_EXPECT_EQ(p, 2);
        /* port 1 is still up on the near device, but 2 was asked for */
        devs[1].ports[1].active = 0;
        TAP_EXPECT_EQ(choose(devs, 2, "", 2, &d, &p, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "port 2");
        /* a port number no device has */
        TAP_EXPECT_EQ(choose(devs, 2, "", 5, &d, &p, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "port 5");
    }

    TAP_TEST("error messages are truncated safely into a small buffer") {
        ibmc_dev_info_t devs[8];
        char small[12];
        for (int i = 0; i < 8; i++) {
            char name[IBMC_DEVSEL_NAME_LEN];
            memset(name, 'a' + i, sizeof(name) - 1);
            name[sizeof(name) - 1] = '\0';
            devs[i] = dev(name, 0);
            add_port(&devs[i], 1, 0, IBMC_LL_INFINIBAND);
        }
        /* eight 63-character names overflow the internal name list */
        TAP_EXPECT_EQ(choose(devs, 8, "", 0, &d, &p, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "no device has an active port");
        TAP_EXPECT(strlen(why) < WHY_LEN);
        memset(small, 'Z', sizeof(small));
        TAP_EXPECT_EQ(ibmc_devsel_choose(devs, 8, "nope", 0, &d, &p, small, sizeof(small)),
                      (unsigned long long) -1);
        TAP_EXPECT(memchr(small, '\0', sizeof(small)) != NULL);
    }

    /* ================= GID ================= */

    TAP_TEST("GID on InfiniBand: index 0") {
        ibmc_gid_info_t t[3] = { gid(0, IBMC_GID_IB, "ib"), gid(1, IBMC_GID_IB, "ib"),
            gid(2, IBMC_GID_IB, "ib")
        };
        TAP_EXPECT_EQ(pick_gid(t, 3, IBMC_LL_INFINIBAND, -1, &g, why), 0);
        TAP_EXPECT_EQ(g, 0);
        /* index 0 listed last */
        ibmc_gid_info_t u[2] = { gid(4, IBMC_GID_IB, "ib"), gid(0, IBMC_GID_IB, "ib") };
        TAP_EXPECT_EQ(pick_gid(u, 2, IBMC_LL_INFINIBAND, -1, &g, why), 0);
        TAP_EXPECT_EQ(g, 0);
        /* an unspecified link layer is InfiniBand (old drivers) */
        TAP_EXPECT_EQ(pick_gid(u, 2, IBMC_LL_UNSPECIFIED, -1, &g, why), 0);
        TAP_EXPECT_EQ(g, 0);
    }

    TAP_TEST("GID on InfiniBand: index 0 missing -> error") {
        ibmc_gid_info_t t[2] = { gid(1, IBMC_GID_IB, "ib"), gid(2, IBMC_GID_IB, "ib") };
        TAP_EXPECT_EQ(pick_gid(t, 2, IBMC_LL_INFINIBAND, -1, &g, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "index 0");
        TAP_EXPECT_EQ(g, (unsigned long long) -77);
        TAP_EXPECT_EQ(pick_gid(NULL, 0, IBMC_LL_INFINIBAND, -1, &g, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "index 0");
    }

    TAP_TEST("GID on RoCE: v2 IPv4-mapped over v2 link-local over v1") {
        /* the usual mlx5 table: v1/v2 pairs, link-local first */
        ibmc_gid_info_t t[4] = {
            gid(0, IBMC_GID_ROCE_V1, "ll"), gid(1, IBMC_GID_ROCE_V2, "ll"),
            gid(2, IBMC_GID_ROCE_V1, "v4"), gid(3, IBMC_GID_ROCE_V2, "v4")
        };
        TAP_EXPECT_EQ(pick_gid(t, 4, IBMC_LL_ETHERNET, -1, &g, why), 0);
        TAP_EXPECT_EQ(g, 3);
        /* the same table in reverse order */
        ibmc_gid_info_t r[4] = { t[3], t[2], t[1], t[0] };
        TAP_EXPECT_EQ(pick_gid(r, 4, IBMC_LL_ETHERNET, -1, &g, why), 0);
        TAP_EXPECT_EQ(g, 3);
        /* without the IPv4 address: the v2 link-local one */
        TAP_EXPECT_EQ(pick_gid(t, 2, IBMC_LL_ETHERNET, -1, &g, why), 0);
        TAP_EXPECT_EQ(g, 1);
        ibmc_gid_info_t r2[2] = { t[1], t[0] };
        TAP_EXPECT_EQ(pick_gid(r2, 2, IBMC_LL_ETHERNET, -1, &g, why), 0);
        TAP_EXPECT_EQ(g, 1);
        /* only RoCE v1 */
        ibmc_gid_info_t v1[2] = { gid(0, IBMC_GID_ROCE_V1, "ll"), gid(2, IBMC_GID_ROCE_V1, "v4") };
        TAP_EXPECT_EQ(pick_gid(v1, 2, IBMC_LL_ETHERNET, -1, &g, why), 0);
        TAP_EXPECT_EQ(g, 0);
        /* an IPv4-mapped address on a v1 GID does not beat a v2 GID */
        ibmc_gid_info_t m[2] = { gid(2, IBMC_GID_ROCE_V1, "v4"), gid(1, IBMC_GID_ROCE_V2, "ll") };
        TAP_EXPECT_EQ(pick_gid(m, 2, IBMC_LL_ETHERNET, -1, &g, why), 0);
        TAP_EXPECT_EQ(g, 1);
    }

    TAP_TEST("GID on RoCE: IPv4-mapped beats a global IPv6 v2 GID, which beats v1") {
        ibmc_gid_info_t t[3] = {
            gid(0, IBMC_GID_ROCE_V1, "global"), gid(5, IBMC_GID_ROCE_V2, "global"),
            gid(7, IBMC_GID_ROCE_V2, "v4")
        };
        TAP_EXPECT_EQ(pick_gid(t, 3, IBMC_LL_ETHERNET, -1, &g, why), 0);
        TAP_EXPECT_EQ(g, 7);
        TAP_EXPECT_EQ(pick_gid(t, 2, IBMC_LL_ETHERNET, -1, &g, why), 0);
        TAP_EXPECT_EQ(g, 5);
        /* several IPv4-mapped: the first listed */
        ibmc_gid_info_t two[3] = { gid(1, IBMC_GID_ROCE_V2, "ll"), gid(3, IBMC_GID_ROCE_V2, "v4"),
            gid(5, IBMC_GID_ROCE_V2, "v4")
        };
        TAP_EXPECT_EQ(pick_gid(two, 3, IBMC_LL_ETHERNET, -1, &g, why), 0);
        TAP_EXPECT_EQ(g, 3);
    }

    TAP_TEST("GID: explicit want_index present -> chosen") {
        ibmc_gid_info_t t[4] = {
            gid(0, IBMC_GID_ROCE_V1, "ll"), gid(1, IBMC_GID_ROCE_V2, "ll"),
            gid(2, IBMC_GID_ROCE_V1, "v4"), gid(3, IBMC_GID_ROCE_V2, "v4")
        };
        TAP_EXPECT_EQ(pick_gid(t, 4, IBMC_LL_ETHERNET, 2, &g, why), 0);
        TAP_EXPECT_EQ(g, 2);
        TAP_EXPECT_EQ(pick_gid(t, 4, IBMC_LL_ETHERNET, 0, &g, why), 0);
        TAP_EXPECT_EQ(g, 0);
        ibmc_gid_info_t ib[2] = { gid(0, IBMC_GID_IB, "ib"), gid(3, IBMC_GID_IB, "ib") };
        TAP_EXPECT_EQ(pick_gid(ib, 2, IBMC_LL_INFINIBAND, 3, &g, why), 0);
        TAP_EXPECT_EQ(g, 3);
    }

    TAP_TEST("GID: explicit want_index absent -> error naming the index") {
        ibmc_gid_info_t t[2] = { gid(0, IBMC_GID_ROCE_V1, "ll"), gid(1, IBMC_GID_ROCE_V2, "ll") };
        TAP_EXPECT_EQ(pick_gid(t, 2, IBMC_LL_ETHERNET, 7, &g, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "7");
        TAP_EXPECT_STR_HAS(why, "GID index 7");
        TAP_EXPECT_EQ(g, (unsigned long long) -77);
        ibmc_gid_info_t ib[1] = { gid(0, IBMC_GID_IB, "ib") };
        TAP_EXPECT_EQ(pick_gid(ib, 1, IBMC_LL_INFINIBAND, 12, &g, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "GID index 12");
    }

    TAP_TEST("GID on RoCE without RoCE GIDs -> error") {
        ibmc_gid_info_t t[2] = { gid(0, IBMC_GID_IB, "ll"), gid(1, IBMC_GID_IB, "v4") };
        TAP_EXPECT_EQ(pick_gid(t, 2, IBMC_LL_ETHERNET, -1, &g, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "no usable GID");
        TAP_EXPECT_EQ(g, (unsigned long long) -77);
        TAP_EXPECT_EQ(pick_gid(NULL, 0, IBMC_LL_ETHERNET, -1, &g, why), (unsigned long long) -1);
        TAP_EXPECT_STR_HAS(why, "no usable GID");
    }

    return tap_done();
}
