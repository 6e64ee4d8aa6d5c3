/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The SMPI baselines' command lines: smpirun may leave its own --cfg=...
 * and --log=... options in argv, so the programs take positional
 * arguments only. */

#ifndef SMPI_ARGS_H_INCLUDED
#define SMPI_ARGS_H_INCLUDED

#include <string.h>

/* Drops every argument that starts with "--" from argv (keeping argv[0]);
 * returns the new argc. */
static inline int smpi_positional_args(int argc, char *argv[])
{
    int n = 1;
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--", 2))
            argv[n++] = argv[i];
    argv[n] = NULL;
    return n;
}

#endif /* SMPI_ARGS_H_INCLUDED */
