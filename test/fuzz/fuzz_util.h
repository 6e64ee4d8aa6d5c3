/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Helpers shared by the fuzz harnesses: a reader that turns the fuzzer's
 * bytes into decisions (running dry yields zeros, so every input is a
 * complete program), and CHECK, which names the broken invariant on stderr
 * and aborts so that libFuzzer records the input as a crash. */

#ifndef FUZZ_UTIL_H_INCLUDED
#define FUZZ_UTIL_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: invariant violated: %s: ", __FILE__,  \
                    __LINE__, #cond);                                      \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
            abort();                                                       \
        }                                                                  \
    } while (0)

/* Build with -DFUZZ_TRACE (make trace) to see what a harness does with one
 * input: build/trace_<target> corpus/<target>/<seed>. */
#ifdef FUZZ_TRACE
#define TRACE(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr))
#else
#define TRACE(...) ((void) 0)
#endif

typedef struct {
    const uint8_t *p;
    size_t left;
} fz_t;

static inline void fz_init(fz_t * f, const uint8_t * data, size_t size)
{
    f->p = data;
    f->left = size;
}

static inline int fz_empty(const fz_t * f)
{
    return f->left == 0;
}

static inline uint8_t fz_u8(fz_t * f)
{
    if (!f->left)
        return 0;
    f->left--;
    return *f->p++;
}

static inline uint16_t fz_u16(fz_t * f)
{
    uint16_t v = fz_u8(f);
    return (uint16_t) (v | fz_u8(f) << 8);
}

static inline uint32_t fz_u32(fz_t * f)
{
    uint32_t v = fz_u16(f);
    return v | (uint32_t) fz_u16(f) << 16;
}

static inline uint64_t fz_u64(fz_t * f)
{
    uint64_t v = fz_u32(f);
    return v | (uint64_t) fz_u32(f) << 32;
}

/* Copy n bytes out (zeros once the input is used up). */
static inline void fz_bytes(fz_t * f, void *dst, size_t n)
{
    size_t k = n < f->left ? n : f->left;
    memcpy(dst, f->p, k);
    memset((char *) dst + k, 0, n - k);
    f->p += k;
    f->left -= k;
}

#endif /* FUZZ_UTIL_H_INCLUDED */
