/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* A testing knob that breaks one RC queue pair on purpose
 * (MPIR_CVAR_IBMC_FAULT_QP_ERROR), so that the fabric tests can check what a
 * broken connection does to a job: it must end with an error that names the
 * peer and the operation, never hang and never deliver part of a message as
 * if it were whole.  Real faults (a cable pulled, a peer's HCA reset) reach
 * the same code: the work requests on the queue pair complete in error.
 *
 * Layer L1: this file parses the knob, answers whether a fault is due and
 * breaks a queue pair; the layers that own a path act on its answer (the
 * stale read in ibmc_rndv.c, the forged datagrams in ibmc_ud.c). */

#include <mpidimpl.h>
#include "ibmc_types.h"
#include "ibmc_qp_fault.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_IBMC_FAULT_QP_ERROR
      category    : CH4_IBMC
      type        : string
      default     : ""
      class       : none
      verbosity   : MPI_T_VERBOSITY_MPIDEV_DETAIL
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Testing knob, not for production use: break one RC queue pair of
        this process on purpose, to check that a broken connection ends the
        job with a clear error instead of a hang.  "send=N" moves the queue
        pair that carries this process's N-th RC packet to the error state
        right after the packet is posted; "read=N" does the same with its
        N-th RDMA READ of the rendezvous protocol.  "stale_read=N" checks
        that a finished rendezvous leaves the sender's memory closed: one
        second after its N-th rendezvous receive has sent its FIN, this
        process reads from the sender again with the rkey of that transfer,
        which must fail (remote access error) and end the job.
        "forge_cm=N": at the end of MPI_Init, world rank N sends rank 0 a
        connection request and a reply that claim to come from another
        rank: the job's key, the wrong source; rank 0 must drop both
        (pvar ibmc_cm_dropped) and the job go on unharmed.
        "nodeseg_nomem=N": world rank N runs out of memory (as it
        pretends) whenever it plans a node segment for ibmc_node_rd, so
        every member of the communicator must fall back to a stock
        allgather together, and none hang.  N counts from 1 for the
        others.  Empty (the default) is off.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

int MPIDI_IBMC_qp_fault_init(MPIDI_IBMC_state_t * st)
{
    int mpi_errno = MPI_SUCCESS;
    const char *s = MPIR_CVAR_IBMC_FAULT_QP_ERROR;
    char kind[16];
    unsigned long long n;
    int used = 0;

    st->qp_fault_at = 0;
    if (!s || !*s)
        return MPI_SUCCESS;
    if (sscanf(s, "%15[a-z_]=%llu%n", kind, &n, &used) != 2 || s[used] || n == 0 ||
        (strcmp(kind, "send") && strcmp(kind, "read") && strcmp(kind, "stale_read") &&
         strcmp(kind, "forge_cm") && strcmp(kind, "nodeseg_nomem"))) {
        MPIR_ERR_SETANDJUMP3(mpi_errno, MPI_ERR_OTHER, "**ibmc_cvar_str",
                             "**ibmc_cvar_str %s %s %s", "MPIR_CVAR_IBMC_FAULT_QP_ERROR", s,
                             "it must be send=N, read=N, stale_read=N, forge_cm=N or "
                             "nodeseg_nomem=N with N >= 1");
    }
    st->qp_fault_kind = !strcmp(kind, "send") ? IBMC_QP_FAULT_SEND :
        !strcmp(kind, "read") ? IBMC_QP_FAULT_READ :
        !strcmp(kind, "stale_read") ? IBMC_QP_FAULT_STALE_READ :
        !strcmp(kind, "forge_cm") ? IBMC_QP_FAULT_FORGE_CM : IBMC_QP_FAULT_NODESEG_NOMEM;
    st->qp_fault_at = n;
  fn_fail:
    return mpi_errno;
}

void MPIDI_IBMC_qp_fault_posted(MPIDI_IBMC_state_t * st, struct ibv_qp *qp, int is_read)
{
    int kind = is_read ? IBMC_QP_FAULT_READ : IBMC_QP_FAULT_SEND;
    if (kind != st->qp_fault_kind || ++st->qp_fault_count != st->qp_fault_at)
        return;
    struct ibv_qp_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_ERR;
    int rc = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
    fprintf(stderr, "ibmc: MPIR_CVAR_IBMC_FAULT_QP_ERROR moved QP %#x to the error state "
            "after %s %llu%s\n", qp->qp_num, is_read ? "RDMA READ" : "RC packet",
            (unsigned long long) st->qp_fault_at, rc ? " (ibv_modify_qp failed)" : "");
}

int MPIDI_IBMC_qp_fault_stale_read_due(MPIDI_IBMC_state_t * st)
{
    return st->qp_fault_kind == IBMC_QP_FAULT_STALE_READ &&
        ++st->qp_fault_count == st->qp_fault_at;
}

int MPIDI_IBMC_qp_fault_forger(const MPIDI_IBMC_state_t * st, int *claimed)
{
    if (st->qp_fault_kind != IBMC_QP_FAULT_FORGE_CM || st->world_size < 3)
        return 0;
    /* a rank that is neither the forger nor rank 0, the target */
    *claimed = (int) ((st->qp_fault_at + 1) % st->world_size);
    if (*claimed == 0)
        *claimed = 1;
    return st->my_rank == (int) st->qp_fault_at && *claimed != st->my_rank;
}

int MPIDI_IBMC_qp_fault_nodeseg_nomem(const MPIDI_IBMC_state_t * st)
{
    return st->qp_fault_at && st->qp_fault_kind == IBMC_QP_FAULT_NODESEG_NOMEM &&
        st->my_rank == (int) st->qp_fault_at;
}
