/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Host unit tests of ibmc_mcast_board.c: the owner's reading of the words
 * that members' RDMA-written ACKs leave on its board. */

#include <stdlib.h>
#include <string.h>
#include "ibmc_mcast_board.h"
#include "tap.h"
#include "rng.h"

#define N 6

int main(void)
{
    uint64_t words[N], seen[N];
    ibmc_mcast_board_t b;
    uint32_t pos;

    TAP_TEST("a board starts cleared and says nothing") {
        memset(words, 0xab, sizeof(words));
        memset(seen, 0xcd, sizeof(seen));
        ibmc_mcast_board_init(&b, words, seen, N, 7);
        for (int m = 0; m < N; m++) {
            TAP_EXPECT_EQ(words[m], 0);
            TAP_EXPECT_EQ(ibmc_mcast_board_take(&b, m, &pos), 0);
        }
        TAP_EXPECT_EQ(b.taken, 0);
    }

    TAP_TEST("a written word is taken once, with its position") {
        ibmc_mcast_board_init(&b, words, seen, N, 7);
        words[2] = ibmc_mcast_board_word(7, 40);
        pos = 0;
        TAP_EXPECT_EQ(ibmc_mcast_board_take(&b, 2, &pos), 1);
        TAP_EXPECT_EQ(pos, 40);
        TAP_EXPECT_EQ(ibmc_mcast_board_take(&b, 2, &pos), 0);
        TAP_EXPECT_EQ(ibmc_mcast_board_take(&b, 1, &pos), 0);
        TAP_EXPECT_EQ(b.taken, 1);
    }

    TAP_TEST("later writes overwrite earlier unread ones: only the newest is taken") {
        ibmc_mcast_board_init(&b, words, seen, N, 9);
        for (uint32_t p = 1; p <= 50; p++)
            words[4] = ibmc_mcast_board_word(9, p);
        TAP_EXPECT_EQ(ibmc_mcast_board_take(&b, 4, &pos), 1);
        TAP_EXPECT_EQ(pos, 50);
        TAP_EXPECT_EQ(b.taken, 1);
    }

    TAP_TEST("positions past 2^32 wrap inside the low half, the epoch stays") {
        ibmc_mcast_board_init(&b, words, seen, N, 3);
        words[0] = ibmc_mcast_board_word(3, UINT32_MAX);
        TAP_EXPECT_EQ(ibmc_mcast_board_take(&b, 0, &pos), 1);
        TAP_EXPECT_EQ(pos, UINT32_MAX);
        words[0] = ibmc_mcast_board_word(3, UINT32_MAX + 5u);
        TAP_EXPECT_EQ(ibmc_mcast_board_take(&b, 0, &pos), 1);
        TAP_EXPECT_EQ(pos, 4);
    }

    TAP_TEST("a late write of an old channel is foreign: reported once, nothing taken") {
        ibmc_mcast_board_init(&b, words, seen, N, 12);
        words[1] = ibmc_mcast_board_word(11, 99);
        pos = 1234;
        TAP_EXPECT_EQ(ibmc_mcast_board_take(&b, 1, &pos), -1);
        TAP_EXPECT_EQ(pos, 1234);
        TAP_EXPECT_EQ(ibmc_mcast_board_take(&b, 1, &pos), 0);
        TAP_EXPECT_EQ(b.foreign, 1);
        /* a second foreign word is reported again; then the member's own */
        words[1] = ibmc_mcast_board_word(10, 5);
        TAP_EXPECT_EQ(ibmc_mcast_board_take(&b, 1, &pos), -1);
        words[1] = ibmc_mcast_board_word(12, 8);
        TAP_EXPECT_EQ(ibmc_mcast_board_take(&b, 1, &pos), 1);
        TAP_EXPECT_EQ(pos, 8);
        TAP_EXPECT_EQ(b.foreign, 2);
        TAP_EXPECT_EQ(b.taken, 1);
    }

    TAP_TEST("a write torn between the halves reads as one of the two positions") {
        ibmc_mcast_board_init(&b, words, seen, N, 21);
        uint64_t old = ibmc_mcast_board_word(21, 16), new = ibmc_mcast_board_word(21, 32);
        words[3] = (old & 0xffffffff00000000ull) | (new & 0xffffffffull);
        TAP_EXPECT_EQ(ibmc_mcast_board_take(&b, 3, &pos), 1);
        TAP_EXPECT_EQ(pos, 32);
        words[3] = (new & 0xffffffff00000000ull) | (old & 0xffffffffull);
        TAP_EXPECT_EQ(ibmc_mcast_board_take(&b, 3, &pos), 1);
        TAP_EXPECT_EQ(pos, 16);
    }

    TAP_TEST("members outside the board are never read") {
        ibmc_mcast_board_init(&b, words, seen, N - 1, 1);
        words[N - 1] = ibmc_mcast_board_word(1, 3);
        TAP_EXPECT_EQ(ibmc_mcast_board_take(&b, N - 1, &pos), 0);
        TAP_EXPECT_EQ(ibmc_mcast_board_take(&b, -1, &pos), 0);
        TAP_EXPECT_EQ(b.taken, 0);
    }

    TAP_TEST("arbitrary words: every position taken is one that was written in the epoch") {
        rng_t r;
        rng_seed(&r, 5);
        int bad = 0, taken = 0, foreign = 0;
        ibmc_mcast_board_init(&b, words, seen, N, 77);
        for (int i = 0; i < 100000; i++) {
            int m = (int) rng_below(&r, N);
            uint64_t w = rng_next(&r);
            if (rng_below(&r, 2))
                w = ibmc_mcast_board_word(77, (uint32_t) w);
            words[m] = w;
            int k = ibmc_mcast_board_take(&b, m, &pos);
            if (k == 1) {
                taken++;
                bad += (w >> 32) != 77 || pos != (uint32_t) w;
            } else if (k == -1) {
                foreign++;
                bad += (w >> 32) == 77;
            }
        }
        TAP_EXPECT_EQ(bad, 0);
        TAP_EXPECT(taken > 40000 && foreign > 40000);
        TAP_EXPECT_EQ((uint64_t) taken, b.taken);
        TAP_EXPECT_EQ((uint64_t) foreign, b.foreign);
    }

    return tap_done();
}
