/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* A deterministic PRNG (splitmix64) for the host unit tests, so every failure
 * can be replayed from its seed. */

#ifndef RNG_H_INCLUDED
#define RNG_H_INCLUDED

#include <stdint.h>

typedef struct {
    uint64_t s;
} rng_t;

static inline void rng_seed(rng_t * r, uint64_t seed)
{
    r->s = seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
}

static inline uint64_t rng_next(rng_t * r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, n); n > 0. */
static inline uint64_t rng_below(rng_t * r, uint64_t n)
{
    return rng_next(r) % n;
}

/* Uniform in [0, 1). */
static inline double rng_unit(rng_t * r)
{
    return (double) (rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

#endif /* RNG_H_INCLUDED */
