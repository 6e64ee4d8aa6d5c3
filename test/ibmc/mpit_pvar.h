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

#endif /* MPIT_PVAR_H_INCLUDED */
