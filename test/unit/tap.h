/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* A tiny TAP producer for the host unit tests.
 *
 *   TAP_TEST("name") {
 *       TAP_EXPECT(x == 1);
 *       TAP_EXPECT_EQ(a, b);
 *   }
 *   ...
 *   return tap_done();
 *
 * Every TAP_TEST block becomes one "ok K - name" / "not ok K - name" line;
 * each failed expectation inside it prints a "#" diagnostic with its
 * location.  tap_done() prints the plan "1..N" (TAP allows the plan at the
 * end) and returns the exit status: 0 only if every test passed. */

#ifndef TAP_H_INCLUDED
#define TAP_H_INCLUDED

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_count;           /* tests reported so far */
static int tap_failed;          /* tests that failed */
static int tap_cur_fails;       /* failed expectations in the current test */

static inline void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void tap_diag(const char *fmt, ...)
{
    va_list ap;
    fputs("# ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

/* Report one test directly. */
static inline int tap_ok(int pass, const char *name)
{
    tap_count++;
    if (!pass)
        tap_failed++;
    printf("%sok %d - %s\n", pass ? "" : "not ", tap_count, name);
    fflush(stdout);
    return pass;
}

static inline int tap_begin_(void)
{
    tap_cur_fails = 0;
    return 1;
}

static inline int tap_end_(const char *name)
{
    tap_ok(tap_cur_fails == 0, name);
    return 0;
}

/* Runs the following block once and reports it as one test. */
#define TAP_TEST(name) \
    for (int tap_once_ = tap_begin_(); tap_once_; tap_once_ = tap_end_(name))

static inline int tap_expect_(int pass, const char *what, const char *file, int line)
{
    if (!pass) {
        tap_cur_fails++;
        tap_diag("  failed: %s  (%s:%d)", what, file, line);
    }
    return pass;
}

#define TAP_EXPECT(cond) tap_expect_(!!(cond), #cond, __FILE__, __LINE__)

/* An unconditional failure of the current test. */
#define TAP_FAIL(what) tap_expect_(0, what, __FILE__, __LINE__)

#define TAP_EXPECT_EQ(a, b) \
    do { \
        unsigned long long tap_a_ = (unsigned long long) (a); \
        unsigned long long tap_b_ = (unsigned long long) (b); \
        if (!tap_expect_(tap_a_ == tap_b_, #a " == " #b, __FILE__, __LINE__)) \
            tap_diag("    got %llu (0x%llx), expected %llu (0x%llx)", tap_a_, tap_a_, \
                     tap_b_, tap_b_); \
    } while (0)

#define TAP_EXPECT_STR_HAS(hay, needle) \
    do { \
        const char *tap_h_ = (hay), *tap_n_ = (needle); \
        if (!tap_expect_(tap_h_ && strstr(tap_h_, tap_n_) != NULL, \
                         #hay " contains " #needle, __FILE__, __LINE__)) \
            tap_diag("    string: \"%s\"  wanted: \"%s\"", tap_h_ ? tap_h_ : "(null)", tap_n_); \
    } while (0)

static inline int tap_done(void)
{
    printf("1..%d\n", tap_count);
    if (tap_failed)
        tap_diag("%d of %d tests failed", tap_failed, tap_count);
    fflush(stdout);
    return tap_failed ? 1 : 0;
}

#endif /* TAP_H_INCLUDED */
