/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#ifndef IBMC_PROGRESS_H_INCLUDED
#define IBMC_PROGRESS_H_INCLUDED

#include "ibmc_impl.h"

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_progress(int vci, int blocking)
{
    return MPIDI_IBMC_progress_poll(vci, blocking);
}

#endif /* IBMC_PROGRESS_H_INCLUDED */
