/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* ibmc_info: the ibmc CVARs in force, read through the MPI tool interface of
 * the MPI library the program is linked with.  MPI_T_init_thread may be
 * called without MPI_Init, and it reads the CVARs from the environment just
 * as MPI_Init would, so the values are the ones an MPI process started from
 * this environment would use. */

#include <mpi.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_info.h"

#define CVAR_PREFIX "MPIR_CVAR_IBMC_"

static const char *const extra_cvars[] = {
    "MPIR_CVAR_BCAST_INTRA_ALGORITHM",
    "MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM",
};

static int mpit_started;

static int wanted(const char *name)
{
    if (!strncmp(name, CVAR_PREFIX, strlen(CVAR_PREFIX)))
        return 1;
    for (size_t i = 0; i < sizeof(extra_cvars) / sizeof(extra_cvars[0]); i++) {
        if (!strcmp(name, extra_cvars[i]))
            return 1;
    }
    return 0;
}

static const char *mpi_err_str(int err, char *buf, size_t len)
{
    int n = (int) len;
    if (MPI_Error_string(err, buf, &n) != MPI_SUCCESS)
        snprintf(buf, len, "MPI error %d", err);
    return buf;
}

/* The environment variable that set CVAR `name`, if one did: MPICH also
 * accepts the MPICH_ and MPIR_PARAM_ spellings. */
static const char *env_source(const char *name, const char **value)
{
    static char var[256];
    const char *suffix = name + strlen("MPIR_CVAR_");
    const char *const prefixes[] = { "MPIR_CVAR_", "MPIR_PARAM_", "MPICH_" };

    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        snprintf(var, sizeof(var), "%s%s", prefixes[i], suffix);
        const char *v = getenv(var);
        if (v) {
            *value = v;
            return var;
        }
    }
    return NULL;
}

/* The name of choice `value` of an enumerated CVAR, from its description.
 * MPICH registers these as plain MPI_INT variables, numbered in the order
 * their description lists the choices, and the description reaches MPI_T
 * with its lines joined: "...algorithmauto - Internal ...binomial    - Force
 * ...".  The choices after the first are laid out in a column (name padded
 * with blanks to a common width before " - "), which is what separates a
 * name from the text glued in front of it; the first choice is MPICH's
 * "auto - Internal algorithm selection" in every algorithm CVAR.  Returns 0
 * with the name, or -1 if the description does not have that shape. */
static int enum_choice(const char *desc, int value, char *name, size_t len)
{
    enum { MAX_CHOICES = 64 };
    struct {
        const char *end;        /* one past the last character of the word run */
        int run, blanks;
    } ch[MAX_CHOICES];
    int n = 0;

    for (const char *p = strstr(desc, " - "); p && n < MAX_CHOICES; p = strstr(p + 3, " - ")) {
        const char *e = p;
        int blanks = 0, run = 0;
        while (e > desc && e[-1] == ' ') {
            e--;
            blanks++;
        }
        while (e - run > desc && (isalnum((unsigned char) e[-run - 1]) || e[-run - 1] == '_'))
            run++;
        if (run == 0)
            continue;
        ch[n].end = e;
        ch[n].run = run;
        ch[n].blanks = blanks;
        n++;
    }
    if (value < 0 || value >= n)
        return -1;

    if (value == 0) {
        const char *text = ch[0].end + ch[0].blanks + 3;
        if (ch[0].run < 4 || strncmp(ch[0].end - 4, "auto", 4) ||
            strncmp(text, "Internal algorithm selection", 28))
            return -1;
        snprintf(name, len, "auto");
        return 0;
    }

    /* The column width is name plus blanks; a word glued in front of a name
     * only makes a run longer, so the narrowest entry gives the width. */
    int width = 0;
    for (int i = 1; i < n; i++) {
        if (!width || ch[i].run + ch[i].blanks < width)
            width = ch[i].run + ch[i].blanks;
    }
    int nlen = width - ch[value].blanks;
    if (nlen < 1 || nlen > ch[value].run)
        return -1;
    snprintf(name, len, "%.*s", nlen, ch[value].end - nlen);
    return 0;
}

/* Read CVAR `i` into text, and into *ival when it is an integer. */
static int read_cvar(int i, MPI_Datatype dt, char *text, size_t len, long long *ival)
{
    MPI_T_cvar_handle h;
    int count, err;
    union {
        int i;
        unsigned u;
        unsigned long ul;
        unsigned long long ull;
        MPI_Count c;
        double d;
        char s[1024];
    } v;

    err = MPI_T_cvar_handle_alloc(i, NULL, &h, &count);
    if (err != MPI_SUCCESS)
        return err;
    if (count != 1 && dt != MPI_CHAR) {
        snprintf(text, len, "(%d values; not shown)", count);
        MPI_T_cvar_handle_free(&h);
        return MPI_SUCCESS;
    }
    if (dt == MPI_CHAR && count > (int) sizeof(v.s)) {
        snprintf(text, len, "(a string longer than %zu bytes; not shown)", sizeof(v.s));
        MPI_T_cvar_handle_free(&h);
        return MPI_SUCCESS;
    }
    memset(&v, 0, sizeof(v));
    err = MPI_T_cvar_read(h, &v);
    MPI_T_cvar_handle_free(&h);
    if (err != MPI_SUCCESS)
        return err;

    *ival = 0;
    if (dt == MPI_CHAR) {
        v.s[sizeof(v.s) - 1] = '\0';
        snprintf(text, len, "\"%s\"", v.s);
    } else if (dt == MPI_INT) {
        *ival = v.i;
        snprintf(text, len, "%d", v.i);
    } else if (dt == MPI_UNSIGNED) {
        *ival = v.u;
        snprintf(text, len, "%u", v.u);
    } else if (dt == MPI_UNSIGNED_LONG) {
        *ival = (long long) v.ul;
        snprintf(text, len, "%lu", v.ul);
    } else if (dt == MPI_UNSIGNED_LONG_LONG) {
        *ival = (long long) v.ull;
        snprintf(text, len, "%llu", v.ull);
    } else if (dt == MPI_COUNT) {
        *ival = (long long) v.c;
        snprintf(text, len, "%lld", (long long) v.c);
    } else if (dt == MPI_DOUBLE) {
        snprintf(text, len, "%g", v.d);
    } else {
        snprintf(text, len, "(a datatype ibmc_info does not know)");
    }
    return MPI_SUCCESS;
}

static void remember(const char *name, const char *text, long long ival, info_cvars_t * cv)
{
    if (!strcmp(name, "MPIR_CVAR_IBMC_DEVICE")) {
        /* text is the quoted string */
        size_t n = strlen(text);
        if (n >= 2)
            snprintf(cv->device, sizeof(cv->device), "%.*s", (int) (n - 2), text + 1);
    } else if (!strcmp(name, "MPIR_CVAR_IBMC_PORT")) {
        cv->port = (int) ival;
    } else if (!strcmp(name, "MPIR_CVAR_IBMC_GID_INDEX")) {
        cv->gid_index = (int) ival;
    } else if (!strcmp(name, "MPIR_CVAR_IBMC_MCAST")) {
        cv->mcast = (int) ival;
    } else if (!strcmp(name, "MPIR_CVAR_IBMC_MCAST_JOIN_TIMEOUT")) {
        cv->join_timeout = (int) ival;
    }
}

static int cvars_fail(int print, info_cvars_t * cv, const char *fmt, ...)
    __attribute__ ((format(printf, 3, 4)));

static int cvars_fail(int print, info_cvars_t * cv, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cv->why, sizeof(cv->why), fmt, ap);
    va_end(ap);
    /* MPICH's error stacks come in lines */
    for (char *p = cv->why; (p = strchr(p, '\n'));)
        *p = ' ';
    if (print) {
        info_say("    ", "cannot read them: %s", cv->why);
        info_say("    ", "(MPI_Init reads them the same way and would fail too; ibmc's "
                 "defaults are assumed below)");
    }
    return -1;
}

int info_cvars_read(int print, info_cvars_t * cv)
{
    char ebuf[MPI_MAX_ERROR_STRING];
    int provided, num, err, shown = 0;

    /* the defaults of ibmc's CVAR blocks, used if MPI_T cannot be read */
    memset(cv, 0, sizeof(*cv));
    cv->gid_index = -1;
    cv->mcast = 1;
    cv->join_timeout = 10;

    if (print)
        printf("# CVARs in force (MPI_T, without MPI_Init)\n");
    if (!mpit_started) {
        err = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
        if (err != MPI_SUCCESS)
            return cvars_fail(print, cv, "MPI_T_init_thread failed: %s",
                              mpi_err_str(err, ebuf, sizeof(ebuf)));
        mpit_started = 1;
    }
    err = MPI_T_cvar_get_num(&num);
    if (err != MPI_SUCCESS)
        return cvars_fail(print, cv, "MPI_T_cvar_get_num failed: %s",
                          mpi_err_str(err, ebuf, sizeof(ebuf)));

    for (int i = 0; i < num; i++) {
        char name[256], desc[8192], text[1100];
        int name_len = sizeof(name), desc_len = sizeof(desc), verbosity, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum et;
        long long ival = 0;

        err = MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &et, desc, &desc_len,
                                  &bind, &scope);
        if (err != MPI_SUCCESS || !wanted(name))
            continue;
        err = read_cvar(i, dt, text, sizeof(text), &ival);
        if (err != MPI_SUCCESS) {
            if (print)
                printf("    %s: MPI_T_cvar_read failed: %s\n", name,
                       mpi_err_str(err, ebuf, sizeof(ebuf)));
            continue;
        }
        shown++;
        const char *env_val = NULL, *env = env_source(name, &env_val);
        const char *stale = "";
        if (dt == MPI_CHAR && env) {
            /* MPICH 4.0.2's MPI_T reads a string CVAR from a copy of its
             * default made at registration, not from the variable that the
             * environment set (integers it reads in place); the value in
             * force is the environment's, as MPICH parses it */
            char quoted[sizeof(text)];
            snprintf(quoted, sizeof(quoted), "\"%.1000s\"", env_val);
            if (strcmp(quoted, text)) {
                snprintf(text, sizeof(text), "%s", quoted);
                stale = "; MPI_T shows only the default of a string CVAR";
            }
        }
        remember(name, text, ival, cv);
        if (!print)
            continue;

        char choice[64];
        if (dt == MPI_INT && strstr(desc, "auto - Internal algorithm selection") &&
            !enum_choice(desc, (int) ival, choice, sizeof(choice)))
            snprintf(text, sizeof(text), "%s (%lld)", choice, ival);
        if (env)
            printf("    %-40s = %s   [from %s=%s%s]\n", name, text, env, env_val, stale);
        else
            printf("    %-40s = %s\n", name, text);
    }
    if (!shown)
        return cvars_fail(print, cv, "this MPI library has no %s* CVARs (is it MPICH built "
                          "with ch4:ibmc?)", CVAR_PREFIX);
    cv->read_ok = 1;
    return 0;
}

void info_cvars_done(void)
{
    if (mpit_started)
        MPI_T_finalize();
    mpit_started = 0;
}
