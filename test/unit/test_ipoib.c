/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Host unit tests of ibmc_ipoib.c: reading the GID out of an IPoIB
 * interface's hardware address as sysfs prints it, and refusing anything
 * else (Ethernet addresses, short, long or malformed text, another port). */

#include <netinet/in.h>
#include <string.h>
#include "ibmc_ipoib.h"
#include "tap.h"

static const uint8_t port_gid[16] = {
    0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x6b, 0x4b, 0x03, 0x00, 0x2c, 0x1a, 0x42
};
static const char *port_addr = "00:00:10:87:fe:80:00:00:00:00:00:00:50:6b:4b:03:00:2c:1a:42\n";

int main(void)
{
    TAP_TEST("an IPoIB address gives the GID after the queue pair number") {
        uint8_t g[16];
        TAP_EXPECT_EQ(ibmc_ipoib_gid(port_addr, g), 0);
        TAP_EXPECT(memcmp(g, port_gid, 16) == 0);
        TAP_EXPECT_EQ(ibmc_ipoib_gid("80:00:02:08:FE:80:00:00:00:00:00:00:50:6B:4B:03:00:2C:1A:42",
                                     g), 0);
        TAP_EXPECT(memcmp(g, port_gid, 16) == 0);
    }

    TAP_TEST("other text is not an IPoIB address") {
        uint8_t g[16];
        TAP_EXPECT_EQ(ibmc_ipoib_gid("52:54:00:12:34:56\n", g), -1);        /* Ethernet */
        TAP_EXPECT_EQ(ibmc_ipoib_gid("00:00:10:87:fe:80:00:00:00:00:00:00:50:6b:4b:03:00:2c:1a",
                                     g), -1);   /* 19 bytes */
        TAP_EXPECT_EQ(ibmc_ipoib_gid("00:00:10:87:fe:80:00:00:00:00:00:00:50:6b:4b:03:00:2c:1a:42:00",
                                     g), -1);   /* 21 bytes */
        TAP_EXPECT_EQ(ibmc_ipoib_gid("00-00-10-87-fe-80-00-00-00-00-00-00-50-6b-4b-03-00-2c-1a-42",
                                     g), -1);
        TAP_EXPECT_EQ(ibmc_ipoib_gid("0g:00:10:87:fe:80:00:00:00:00:00:00:50:6b:4b:03:00:2c:1a:42",
                                     g), -1);
        TAP_EXPECT_EQ(ibmc_ipoib_gid("", g), -1);
    }

    TAP_TEST("the port's interface is IPoIB and carries the port's GID") {
        TAP_EXPECT(ibmc_ipoib_is_port(IBMC_IPOIB_ARPHRD, port_addr, port_gid));
        TAP_EXPECT(!ibmc_ipoib_is_port(1, port_addr, port_gid));       /* ARPHRD_ETHER */
        uint8_t other[16];
        memcpy(other, port_gid, 16);
        other[15] ^= 1;         /* the other port of the HCA */
        TAP_EXPECT(!ibmc_ipoib_is_port(IBMC_IPOIB_ARPHRD, port_addr, other));
    }

    TAP_TEST("the lookup finds nothing for a GID no interface carries") {
        struct in_addr a;
        uint8_t nobody[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8 };
        TAP_EXPECT_EQ(ibmc_ipoib_ipv4(nobody, &a), -1);
    }

    return tap_done();
}
