/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The netmod's run-time errors.  They are macros, as ofi's MPIDI_OFI_CALL and
 * ucx's MPIDI_UCX_CHK_STATUS are, so that MPICH's error stack names the
 * function and line of the failing call, not of a helper.
 *
 * A failed verbs call, a failed work completion or a packet that breaks the
 * protocol leaves a connection in a state nobody can reason about: messages
 * may be lost or half delivered.  These errors are therefore created in
 * MPICH's fatal class (MPIR_ERR_FATAL): under MPI_ERRORS_RETURN too the job
 * ends with the message, instead of carrying on without the lost data.
 * Errors in what the user asked for (a CVAR value) stay recoverable. */

#ifndef IBMC_ERR_H_INCLUDED
#define IBMC_ERR_H_INCLUDED

#include <mpidimpl.h>

static inline int MPIDI_IBMC_verbs_error_at(const char *func, int line, const char *call, int err)
{
    char ebuf[128];
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_FATAL, func, line, MPI_ERR_OTHER,
                                "**ibmc_verbs", "**ibmc_verbs %s %s", call,
                                MPIR_Strerror(err, ebuf, sizeof(ebuf)));
}

/* An error code naming the verbs call `call` that failed with errno value `err`. */
#define MPIDI_IBMC_VERBS_ERROR(call, err) \
    MPIDI_IBMC_verbs_error_at(__func__, __LINE__, (call), (err))

/* An error code for a packet from world rank `rank` (-1: unknown) that breaks
 * the protocol; `what` says how, as a noun phrase ("a short header"). */
#define MPIDI_IBMC_PROTO_ERROR(rank, what) \
    MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_FATAL, __func__, __LINE__, MPI_ERR_OTHER, \
                         "**ibmc_proto", "**ibmc_proto %d %s", (int) (rank), (what))

#endif /* IBMC_ERR_H_INCLUDED */
