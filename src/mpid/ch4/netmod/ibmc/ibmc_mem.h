/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Layer L1 (base): registration of user memory through the registration cache (ibmc_mem.c). */

#ifndef IBMC_MEM_H_INCLUDED
#define IBMC_MEM_H_INCLUDED

#include "ibmc_types.h"

int MPIDI_IBMC_mem_init(MPIDI_IBMC_state_t * st);
void MPIDI_IBMC_mem_finalize(MPIDI_IBMC_state_t * st);
int MPIDI_IBMC_mem_register(MPIDI_IBMC_state_t * st, const void *buf, size_t len,
                            MPIDI_IBMC_reg_t * reg);
void MPIDI_IBMC_mem_release(MPIDI_IBMC_state_t * st, MPIDI_IBMC_reg_t * reg);

#endif /* IBMC_MEM_H_INCLUDED */
