/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L1 (base): the HCA: open the chosen device and port, make the queue pairs
 * and completion queue every connection shares (ibmc_device.c). */

#ifndef IBMC_DEVICE_H_INCLUDED
#define IBMC_DEVICE_H_INCLUDED

#include "ibmc_types.h"

int MPIDI_IBMC_device_open(ibmc_hca_t * hca, char *name, size_t name_len);

#endif /* IBMC_DEVICE_H_INCLUDED */
