/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Reading one of ibmc's MPI_T performance variables by name, for the test
 * programs.  MPI_T must be initialized.  Returns 0 and sets *found = 0 when
 * the library has no such variable. */

#ifndef MPIT_PVAR_H_INCLUDED
#define MPIT_PVAR_H_INCLUDED

#include <mpi.h>
#include <stdio.h>
#include <string.h>

static unsigned long long mpit_pvar_read(const char *name, int *found)
{
    int n, idx = -1;
    MPI_T_pvar_get_num(&n);
    for (int i = 0; i < n && idx < 0; i++) {
        char nm[128], desc[8];
        int nl = sizeof(nm), dl = sizeof(desc), verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum en;
        MPI_T_pvar_get_info(i, nm, &nl, &verb, &cls, &dt, &en, desc, &dl, &bind, &ro, &cont,
                            &atomic);
        if (!strcmp(nm, name))
            idx = i;
    }
    *found = idx >= 0;
    if (idx < 0)
        return 0;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int count;
    unsigned long long v = 0;
    MPI_T_pvar_session_create(&s);
    MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count);
    MPI_T_pvar_read(s, h, &v);
    MPI_T_pvar_handle_free(s, &h);
    MPI_T_pvar_session_free(&s);
    return v;
}

/* name's value for the program prog; a missing variable is printed as
 * prog's failure and counted in *fails. */
static inline unsigned long long mpit_pvar_need(const char *prog, const char *name, int *fails)
{
    int found;
    unsigned long long v = mpit_pvar_read(name, &found);
    if (!found) {
        printf("%s: FAIL: no MPI_T pvar %s\n", prog, name);
        (*fails)++;
    }
    return v;
}

/* The multicast channel's repair counters, which a run without loss must
 * leave where they were: mpit_repairs_read before, mpit_repairs_check
 * after, which prints each that rose as prog's failure of this rank and
 * counts it in *fails. */
#define MPIT_NREPAIRS 3
static const char *const mpit_repairs[MPIT_NREPAIRS] = {
    "ibmc_mcast_naks_sent", "ibmc_mcast_retransmits", "ibmc_mcast_duplicates"
};

static inline void mpit_repairs_read(const char *prog, unsigned long long *v, int *fails)
{
    for (int i = 0; i < MPIT_NREPAIRS; i++)
        v[i] = mpit_pvar_need(prog, mpit_repairs[i], fails);
}

static inline void mpit_repairs_check(const char *prog, int rank, const unsigned long long *v0,
                               int *fails)
{
    for (int i = 0; i < MPIT_NREPAIRS; i++) {
        unsigned long long d = mpit_pvar_need(prog, mpit_repairs[i], fails) - v0[i];
        if (d) {
            printf("%s: FAIL: rank %d: %s rose by %llu without loss\n", prog, rank,
                   mpit_repairs[i], d);
            (*fails)++;
        }
    }
}

#endif /* MPIT_PVAR_H_INCLUDED */
