/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Finding the IPoIB interface of an InfiniBand port, whose IPv4 address
 * rdma_cm needs to join a multicast group on InfiniBand (on RoCE the GID
 * maps the address itself).  An IPoIB interface's 20-byte hardware address
 * is a queue pair number (4 bytes) followed by the port's GID, so the
 * interface of a port is the one whose hardware address ends in the GID the
 * netmod uses.  No verbs: the matching is unit-tested on the host
 * (test/unit/test_ipoib.c), the lookup reads getifaddrs() and
 * /sys/class/net. */

#ifndef IBMC_IPOIB_H_INCLUDED
#define IBMC_IPOIB_H_INCLUDED

#include <stdint.h>

#define IBMC_IPOIB_ARPHRD 32    /* ARPHRD_INFINIBAND, /sys/class/net/IF/type */

/* The GID inside an IPoIB hardware address as sysfs prints it
 * ("80:00:02:08:fe:80:00:...", 20 colon-separated hex bytes).  Returns 0,
 * or -1 when `text` is not such an address. */
int ibmc_ipoib_gid(const char *text, uint8_t gid[16]);

/* Whether an interface of sysfs type `type` with hardware address `text`
 * is an IPoIB interface of the port whose GID is `gid`. */
int ibmc_ipoib_is_port(int type, const char *text, const uint8_t gid[16]);

struct in_addr;

/* An IPv4 address of an IPoIB interface of the port whose GID is `gid`:
 * 0, or -1 when the port has none. */
int ibmc_ipoib_ipv4(const uint8_t gid[16], struct in_addr *addr);

#endif /* IBMC_IPOIB_H_INCLUDED */
