/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The part of the netmod that the rest of CH4 sees.  The inline API in
 * netmod_inline.h forwards to the out-of-line functions declared here, so an
 * edit inside the netmod recompiles the netmod and not all of libmpi. */

#ifndef IBMC_IMPL_H_INCLUDED
#define IBMC_IMPL_H_INCLUDED

#include <mpidimpl.h>

struct MPIDI_IBMC_state;

typedef struct {
    /* Limits derived at init from the packet size (MPIR_CVAR_IBMC_PACKET_SIZE). */
    MPI_Aint packet_size;       /* bytes of one registered eager buffer */
    MPI_Aint am_hdr_max_sz;     /* largest CH4 AM header that fits a first packet */
    MPI_Aint eager_limit;       /* largest header + payload sent in one packet */
    MPI_Aint rndv_threshold;    /* larger contiguous data goes by rendezvous (MPIR_CVAR_IBMC_EAGER_LIMIT) */
    int send16;                 /* compact MPIDIG_SEND headers (MPIR_CVAR_IBMC_COMPACT_SEND_HEADER) */
    int lightweight;            /* requestless one-packet sends (MPIR_CVAR_IBMC_LIGHTWEIGHT_SEND) */
    struct MPIDI_IBMC_state *state;     /* everything else; see ibmc_types.h */
} MPIDI_IBMC_global_t;

extern MPIDI_IBMC_global_t MPIDI_IBMC_global;

#define MPIDI_IBMC_AV(av) ((av)->netmod.ibmc)

int MPIDI_IBMC_progress_poll(int vci, int blocking);
/* one pass of the netmod's progress that never gives the processor away:
 * the multicast channel's look before it decides that a packet is lost */
int MPIDI_IBMC_progress_poll_noyield(void);
int MPIDI_IBMC_rndv_copy_cb(MPIR_Request * rreq);
int MPIDI_IBMC_am_send(int rank, MPIR_Comm * comm, int handler_id,
                       const void *am_hdr, MPI_Aint am_hdr_sz,
                       const void *data, MPI_Aint count, MPI_Datatype datatype,
                       int src_vci, int dst_vci, MPIR_Request * sreq);
int MPIDI_IBMC_send_lightweight(const void *buf, MPI_Aint count, MPI_Datatype datatype,
                                int rank, int tag, MPIR_Comm * comm, int context_offset,
                                MPIDI_av_entry_t * addr, int error_bits, int *sent);

#endif /* IBMC_IMPL_H_INCLUDED */
