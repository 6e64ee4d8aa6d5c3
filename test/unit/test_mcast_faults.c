/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Unit tests of ibmc_mcast_faults: the spec parser's answers and errors,
 * and the filter's promises: every item comes back released exactly once,
 * a held item is late and never lost, rates follow the spec, and a seed
 * replays the same faults. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ibmc_mcast_faults.h"
#include "tap.h"

#define N 20000

static int run(const ibmc_mcast_faults_spec_t * spec, uint64_t salt, int *order, int *delivered,
               int *released, ibmc_mcast_faults_t * f)
{
    static int items[N];
    ibmc_mcast_fault_out_t out[3];
    int k = 0;
    ibmc_mcast_faults_init(f, spec, salt);
    memset(delivered, 0, sizeof(int) * N);
    memset(released, 0, sizeof(int) * N);
    for (int i = 0; i < N; i++) {
        items[i] = i;
        int n = ibmc_mcast_faults_filter(f, &items[i], out);
        if (i % 100 == 99)      /* now and then the completion queue runs dry */
            n += ibmc_mcast_faults_flush(f, out + n);
        for (int j = 0; j < n; j++) {
            int v = *(int *) out[j].item;
            if (out[j].deliver) {
                delivered[v]++;
                order[k++] = v;
            }
            released[v] += out[j].release;
        }
    }
    int n = ibmc_mcast_faults_flush(f, out);
    for (int j = 0; j < n; j++) {
        int v = *(int *) out[j].item;
        delivered[v]++;
        order[k++] = v;
        released[v] += out[j].release;
    }
    return k;
}

int main(void)
{
    ibmc_mcast_faults_spec_t s;
    char err[200];

    TAP_TEST("specs parse, empty means off") {
        TAP_EXPECT_EQ(ibmc_mcast_faults_parse(NULL, &s, err, sizeof(err)), 0);
        TAP_EXPECT(!s.enabled);
        TAP_EXPECT_EQ(ibmc_mcast_faults_parse("", &s, err, sizeof(err)), 0);
        TAP_EXPECT(!s.enabled);
        TAP_EXPECT_EQ(ibmc_mcast_faults_parse("drop=0.1,dup=0.05,reorder=0.05,seed=7", &s, err,
                                              sizeof(err)), 0);
        TAP_EXPECT(s.enabled && s.drop == 0.1 && s.dup == 0.05 && s.reorder == 0.05 && s.seed == 7);
        TAP_EXPECT_EQ(ibmc_mcast_faults_parse("seed=3", &s, err, sizeof(err)), 0);
        TAP_EXPECT(!s.enabled);
        TAP_EXPECT_EQ(ibmc_mcast_faults_parse("drop=1", &s, err, sizeof(err)), 0);
        TAP_EXPECT(s.enabled);
        /* the board's fault leaves the receive path alone */
        TAP_EXPECT_EQ(ibmc_mcast_faults_parse("late_ack=0.25,seed=4", &s, err, sizeof(err)), 0);
        TAP_EXPECT(!s.enabled && s.late_ack == 0.25 && s.seed == 4);
    }

    TAP_TEST("late_ack: about the given share of ACKs, the same for a seed, none when 0") {
        ibmc_mcast_faults_spec_t spec;
        ibmc_mcast_faults_t f, g;
        TAP_EXPECT_EQ(ibmc_mcast_faults_parse("late_ack=0.25,seed=9", &spec, err, sizeof(err)), 0);
        ibmc_mcast_faults_init(&f, &spec, 3);
        ibmc_mcast_faults_init(&g, &spec, 3);
        int n = 0, same = 1;
        for (int i = 0; i < 10000; i++) {
            int a = ibmc_mcast_faults_late_ack(&f);
            same &= a == ibmc_mcast_faults_late_ack(&g);
            n += a;
        }
        TAP_EXPECT(n > 2200 && n < 2800);
        TAP_EXPECT_EQ(f.late_acks, (uint64_t) n);
        TAP_EXPECT(same);
        /* a receive still passes untouched */
        ibmc_mcast_fault_out_t out[3];
        int x;
        TAP_EXPECT_EQ(ibmc_mcast_faults_filter(&f, &x, out), 1);
        TAP_EXPECT(out[0].item == &x && out[0].deliver && out[0].release);
        TAP_EXPECT_EQ(ibmc_mcast_faults_parse("drop=0.5", &spec, err, sizeof(err)), 0);
        ibmc_mcast_faults_init(&f, &spec, 3);
        for (int i = 0; i < 1000; i++)
            TAP_EXPECT_EQ(ibmc_mcast_faults_late_ack(&f), 0);
    }

    TAP_TEST("bad specs are refused with the reason") {
        static const struct {
            const char *text, *why;
        } bad[] = {
            {"drop=1.5", "drop=1.5 is not a probability between 0 and 1"},
            {"drop=-0.1", "drop=-0.1 is not a probability"},
            {"dup=abc", "dup=abc is not a probability"},
            {"reorder=0.5x", "reorder=0.5x is not a probability"},
            {"drop=nan", "drop=nan is not a probability"},
            {"loss=0.1", "unknown key \"loss\" (the keys are drop, dup, reorder, late_ack and seed)"},
            {"late_ack=2", "late_ack=2 is not a probability between 0 and 1"},
            {"drop", "\"drop\" is not of the form key=value"},
            {"=0.1", "\"=0.1\" is not of the form key=value"},
            {"drop=", "\"drop=\" is not of the form key=value"},
            {"seed=-1", "seed=-1 is not an unsigned integer"},
            {"seed=7q", "seed=7q is not an unsigned integer"},
            {"drop=0.6,dup=0.3,reorder=0.2", "drop + dup + reorder is 1.1, above 1"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            err[0] = '\0';
            TAP_EXPECT_EQ(ibmc_mcast_faults_parse(bad[i].text, &s, err, sizeof(err)), -1);
            TAP_EXPECT_STR_HAS(err, bad[i].why);
        }
        char longspec[400];
        memset(longspec, 'a', sizeof(longspec) - 1);
        longspec[sizeof(longspec) - 1] = '\0';
        TAP_EXPECT_EQ(ibmc_mcast_faults_parse(longspec, &s, err, sizeof(err)), -1);
        TAP_EXPECT_STR_HAS(err, "longer than");
    }

    static int order[3 * N], delivered[N], released[N], order2[3 * N];
    ibmc_mcast_faults_t f;

    TAP_TEST("off: every item delivered once, in order") {
        ibmc_mcast_faults_parse("", &s, err, sizeof(err));
        int k = run(&s, 0, order, delivered, released, &f);
        TAP_EXPECT_EQ(k, N);
        int ok = 1;
        for (int i = 0; i < N; i++)
            ok &= order[i] == i && released[i] == 1;
        TAP_EXPECT(ok);
    }

    TAP_TEST("drop, dup and reorder at their rates; every item released once; held items late, never lost") {
        ibmc_mcast_faults_parse("drop=0.1,dup=0.05,reorder=0.05,seed=7", &s, err, sizeof(err));
        int k = run(&s, 3, order, delivered, released, &f);
        int lost = 0, twice = 0, once = 0, rel_ok = 1;
        for (int i = 0; i < N; i++) {
            lost += delivered[i] == 0;
            twice += delivered[i] == 2;
            once += delivered[i] == 1;
            rel_ok &= released[i] == 1;
        }
        TAP_EXPECT(rel_ok);
        TAP_EXPECT_EQ(lost, f.dropped);
        TAP_EXPECT_EQ(twice, f.duplicated);
        TAP_EXPECT_EQ(once + twice + lost, N);
        TAP_EXPECT_EQ(k, N - lost + twice);
        /* 2,000 / 1,000 / 1,000 expected; 5 sigma is about 210 / 150 / 150 */
        TAP_EXPECT(f.dropped > 1790 && f.dropped < 2210);
        TAP_EXPECT(f.duplicated > 850 && f.duplicated < 1150);
        TAP_EXPECT(f.reordered > 800 && f.reordered < 1150);
        int inversions = 0;
        for (int i = 1; i < k; i++)
            inversions += order[i] < order[i - 1];
        TAP_EXPECT(inversions >= (int) f.reordered / 2);
        tap_diag("  %llu dropped, %llu duplicated, %llu reordered, %d inversions",
                 (unsigned long long) f.dropped, (unsigned long long) f.duplicated,
                 (unsigned long long) f.reordered, inversions);
    }

    TAP_TEST("a seed replays the same faults; another rank's salt gives others") {
        ibmc_mcast_faults_parse("drop=0.2,reorder=0.2,seed=11", &s, err, sizeof(err));
        int k1 = run(&s, 5, order, delivered, released, &f);
        int k2 = run(&s, 5, order2, delivered, released, &f);
        TAP_EXPECT_EQ(k1, k2);
        TAP_EXPECT(memcmp(order, order2, sizeof(int) * k1) == 0);
        int k3 = run(&s, 6, order2, delivered, released, &f);
        TAP_EXPECT(k3 != k1 || memcmp(order, order2, sizeof(int) * k1) != 0);
    }

    return tap_done();
}
