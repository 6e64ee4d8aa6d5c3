/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <mpidimpl.h>
#include "ibmc_impl.h"

MPIDI_IBMC_global_t MPIDI_IBMC_global;
