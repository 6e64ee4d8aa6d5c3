/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_mcast_faults.h"

static int parse_prob(const char *key, const char *val, double *out, char *err, size_t err_len)
{
    char *end;
    errno = 0;
    double v = strtod(val, &end);
    if (errno || end == val || *end || !(v >= 0.0 && v <= 1.0)) {
        snprintf(err, err_len, "%s=%s is not a probability between 0 and 1", key, val);
        return -1;
    }
    *out = v;
    return 0;
}

int ibmc_mcast_faults_parse(const char *text, ibmc_mcast_faults_spec_t * spec, char *err,
                            size_t err_len)
{
    memset(spec, 0, sizeof(*spec));
    if (!text || !*text)
        return 0;
    char buf[256];
    if (strlen(text) >= sizeof(buf)) {
        snprintf(err, err_len, "longer than %zu characters", sizeof(buf) - 1);
        return -1;
    }
    strcpy(buf, text);
    for (char *tok = buf, *comma; tok; tok = comma ? comma + 1 : NULL) {
        comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1]) {
            snprintf(err, err_len, "\"%s\" is not of the form key=value", tok);
            return -1;
        }
        *eq = '\0';
        const char *key = tok, *val = eq + 1;
        if (!strcmp(key, "drop")) {
            if (parse_prob(key, val, &spec->drop, err, err_len))
                return -1;
        } else if (!strcmp(key, "dup")) {
            if (parse_prob(key, val, &spec->dup, err, err_len))
                return -1;
        } else if (!strcmp(key, "reorder")) {
            if (parse_prob(key, val, &spec->reorder, err, err_len))
                return -1;
        } else if (!strcmp(key, "late_ack")) {
            if (parse_prob(key, val, &spec->late_ack, err, err_len))
                return -1;
        } else if (!strcmp(key, "seed")) {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(val, &end, 0);
            if (errno || end == val || *end || *val == '-') {
                snprintf(err, err_len, "seed=%s is not an unsigned integer", val);
                return -1;
            }
            spec->seed = s;
        } else {
            snprintf(err, err_len, "unknown key \"%s\" (the keys are drop, dup, reorder, "
                     "late_ack and seed)", key);
            return -1;
        }
    }
    double sum = spec->drop + spec->dup + spec->reorder;
    if (sum > 1.0 + 1e-12) {
        snprintf(err, err_len, "drop + dup + reorder is %g, above 1", sum);
        return -1;
    }
    spec->enabled = sum > 0.0;
    return 0;
}

/* splitmix64: small, and the same sequence on every platform */
static uint64_t next_u64(uint64_t * s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void ibmc_mcast_faults_init(ibmc_mcast_faults_t * f, const ibmc_mcast_faults_spec_t * spec,
                            uint64_t salt)
{
    memset(f, 0, sizeof(*f));
    f->spec = *spec;
    f->rng = spec->seed ^ (salt * 0xd1342543de82ef95ULL);
}

static int emit(ibmc_mcast_fault_out_t * out, int n, void *item, int deliver, int release)
{
    out[n].item = item;
    out[n].deliver = (uint8_t) deliver;
    out[n].release = (uint8_t) release;
    return n + 1;
}

int ibmc_mcast_faults_filter(ibmc_mcast_faults_t * f, void *item, ibmc_mcast_fault_out_t out[3])
{
    int n = 0;
    if (!f->spec.enabled)
        return emit(out, n, item, 1, 1);
    double u = (double) (next_u64(&f->rng) >> 11) * (1.0 / 9007199254740992.0);
    const ibmc_mcast_faults_spec_t *s = &f->spec;
    if (u < s->drop) {
        f->dropped++;
        n = emit(out, n, item, 0, 1);
    } else if (u < s->drop + s->dup) {
        f->duplicated++;
        n = emit(out, n, item, 1, 0);
        n = emit(out, n, item, 1, 1);
    } else if (u < s->drop + s->dup + s->reorder && !f->held) {
        f->reordered++;
        f->held = item;
        return 0;
    } else {
        n = emit(out, n, item, 1, 1);
    }
    /* a held packet goes after the one that overtook it */
    if (f->held && n && out[0].deliver) {
        n = emit(out, n, f->held, 1, 1);
        f->held = NULL;
    }
    return n;
}

int ibmc_mcast_faults_flush(ibmc_mcast_faults_t * f, ibmc_mcast_fault_out_t out[1])
{
    if (!f->held)
        return 0;
    emit(out, 0, f->held, 1, 1);
    f->held = NULL;
    return 1;
}

int ibmc_mcast_faults_late_ack(ibmc_mcast_faults_t * f)
{
    if (!(f->spec.late_ack > 0.0))
        return 0;
    double u = (double) (next_u64(&f->rng) >> 11) * (1.0 / 9007199254740992.0);
    if (u >= f->spec.late_ack)
        return 0;
    f->late_acks++;
    return 1;
}
