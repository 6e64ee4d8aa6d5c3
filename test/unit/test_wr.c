/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Unit tests of ibmc_wr.h: a work-request id gives back the kind and the
 * index, or the context, it was made with, for every kind and the largest
 * index, and the two forms never read as each other. */

#include <stdio.h>
#include "ibmc_wr.h"
#include "tap.h"

typedef struct {
    char pad[3];
    MPIDI_IBMC_wr_ctx_t wr;
    int owner_field;
} owner_t;

int main(void)
{
    TAP_TEST("an index id gives back its kind and index, for every kind") {
        for (int k = IBMC_WR_RC_SEND; k < IBMC_WR_KINDS; k++) {
            uint32_t idxs[] = { 0, 1, 12345, UINT32_MAX >> 8, UINT32_MAX };
            for (size_t i = 0; i < sizeof(idxs) / sizeof(idxs[0]); i++) {
                uint64_t id = MPIDI_IBMC_wr_id_index(k, idxs[i]);
                TAP_EXPECT_EQ(MPIDI_IBMC_wr_kind(id), k);
                TAP_EXPECT_EQ(MPIDI_IBMC_wr_index(id), idxs[i]);
                TAP_EXPECT((id & 1) == 1);
            }
        }
        TAP_EXPECT(IBMC_WR_KINDS <= 128);
    }

    TAP_TEST("a context id gives back its kind and its owner") {
        owner_t o[2] = { {.owner_field = 7}, {.owner_field = 9} };
        for (int j = 0; j < 2; j++) {
            uint64_t id = MPIDI_IBMC_wr_id_ctx(&o[j].wr, IBMC_WR_RDMA_READ + j);
            TAP_EXPECT((id & 1) == 0);
            TAP_EXPECT_EQ(MPIDI_IBMC_wr_kind(id), IBMC_WR_RDMA_READ + j);
            owner_t *back = MPIDI_IBMC_WR_OWNER(id, owner_t, wr);
            TAP_EXPECT(back == &o[j]);
            TAP_EXPECT_EQ(back->owner_field, j ? 9 : 7);
        }
    }

    return tap_done();
}
