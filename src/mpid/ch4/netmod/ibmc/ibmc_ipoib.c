/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Matching IPoIB interfaces to InfiniBand ports (see ibmc_ipoib.h). */

#include <ctype.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_ipoib.h"

static int hex(int c)
{
    return isdigit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
        c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int ibmc_ipoib_gid(const char *text, uint8_t gid[16])
{
    uint8_t b[20];
    const char *p = text;
    for (int i = 0; i < 20; i++) {
        int hi = hex((unsigned char) p[0]), lo = hi < 0 ? -1 : hex((unsigned char) p[1]);
        if (hi < 0 || lo < 0)
            return -1;
        b[i] = (uint8_t) (hi << 4 | lo);
        p += 2;
        if (i < 19) {
            if (*p != ':')
                return -1;
            p++;
        }
    }
    /* sysfs ends the line with a newline */
    if (*p && *p != '\n')
        return -1;
    memcpy(gid, b + 4, 16);
    return 0;
}

int ibmc_ipoib_is_port(int type, const char *text, const uint8_t gid[16])
{
    uint8_t g[16];
    return type == IBMC_IPOIB_ARPHRD && ibmc_ipoib_gid(text, g) == 0 && !memcmp(g, gid, 16);
}

int ibmc_ipoib_ipv4(const uint8_t gid[16], struct in_addr *addr)
{
    struct ifaddrs *ifs, *i;
    int found = -1;
    if (getifaddrs(&ifs))
        return -1;
    for (i = ifs; i && found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        char path[IF_NAMESIZE + 32], type[16] = "", hw[128] = "";
        FILE *f;
        snprintf(path, sizeof(path), "/sys/class/net/%s/type", i->ifa_name);
        if ((f = fopen(path, "r"))) {
            if (!fgets(type, sizeof(type), f))
                type[0] = '\0';
            fclose(f);
        }
        snprintf(path, sizeof(path), "/sys/class/net/%s/address", i->ifa_name);
        if ((f = fopen(path, "r"))) {
            if (!fgets(hw, sizeof(hw), f))
                hw[0] = '\0';
            fclose(f);
        }
        if (ibmc_ipoib_is_port(atoi(type), hw, gid)) {
            *addr = ((struct sockaddr_in *) i->ifa_addr)->sin_addr;
            found = 0;
        }
    }
    freeifaddrs(ifs);
    return found;
}
