/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The plan of ibmc_node_rd's MPI_Allgather (see ibmc_noderd.h). */

#include <stddef.h>
#include "ibmc_noderd.h"

int ibmc_noderd_number_nodes(int nranks, const int *node_id, int *node_of_rank, int *scratch)
{
    /* scratch[k]: the id of node index k.  Quadratic in the number of
     * nodes, once per communicator. */
    int nnodes = 0;
    for (int r = 0; r < nranks; r++) {
        int k = 0;
        while (k < nnodes && scratch[k] != node_id[r])
            k++;
        if (k == nnodes)
            scratch[nnodes++] = node_id[r];
        node_of_rank[r] = k;
    }
    return nnodes;
}

int ibmc_noderd_layout(ibmc_noderd_layout_t * lay, int nranks, const int *node_of_rank,
                       int nnodes)
{
    if (nranks < 1 || nnodes < 1 || nnodes > nranks)
        return -1;
    lay->nranks = nranks;
    lay->nnodes = nnodes;
    lay->core = 1;
    while (lay->core * 2 <= nnodes)
        lay->core *= 2;

    for (int k = 0; k < nnodes; k++)
        lay->node_count[k] = 0;
    int seen = 0;
    for (int r = 0; r < nranks; r++) {
        int k = node_of_rank[r];
        if (k < 0 || k >= nnodes || k > seen)
            return -1;
        if (k == seen)
            seen++;
        lay->node_count[k]++;
    }
    if (seen != nnodes)
        return -1;

    /* pairs in order: core node v, then its partner P+v */
    int pos = 0, P = lay->core;
    for (int v = 0; v < P; v++) {
        lay->node_first[v] = pos;
        pos += lay->node_count[v];
        if (v + P < nnodes) {
            lay->node_first[v + P] = pos;
            pos += lay->node_count[v + P];
        }
    }
    /* node_count is used as a fill cursor, then restored */
    for (int r = 0; r < nranks; r++) {
        int k = node_of_rank[r];
        lay->rank_pos[r] = lay->node_first[k]++;
        lay->pos_rank[lay->rank_pos[r]] = r;
    }
    for (int k = 0; k < nnodes; k++)
        lay->node_first[k] -= lay->node_count[k];
    return 0;
}

/* The blocks of pairs [v, v + len): contiguous by construction. */
static ibmc_noderd_range_t pairs(const ibmc_noderd_layout_t * lay, int v, int len)
{
    ibmc_noderd_range_t g;
    g.first = lay->node_first[v];
    int end = v + len < lay->core ? lay->node_first[v + len] : lay->nranks;
    g.count = end - g.first;
    return g;
}

static ibmc_noderd_range_t own(const ibmc_noderd_layout_t * lay, int node)
{
    ibmc_noderd_range_t g = { lay->node_first[node], lay->node_count[node] };
    return g;
}

static void add(ibmc_noderd_range_t * list, int *n, int first, int count)
{
    if (count > 0) {
        list[*n].first = first;
        list[*n].count = count;
        (*n)++;
    }
}

int ibmc_noderd_rounds(const ibmc_noderd_layout_t * lay, int node,
                       ibmc_noderd_round_t rounds[IBMC_NODERD_MAX_ROUNDS])
{
    int P = lay->core, N = lay->nnodes, L = 0;
    if (N < 2)
        return 0;
    while ((1 << L) < P)
        L++;
    int fold = N != P;
    int n = L + 2 * fold;

    for (int r = 0; r < n; r++) {
        rounds[r].to = rounds[r].from = -1;
        rounds[r].nsend = rounds[r].nrecv = 0;
    }
    int last = n - 1;
    if (node >= P) {
        /* outside the core: give its blocks to the partner, get all others back */
        int v = node - P;
        rounds[0].to = v;
        add(rounds[0].send, &rounds[0].nsend, lay->node_first[node], lay->node_count[node]);
        rounds[last].from = v;
        ibmc_noderd_range_t me = own(lay, node);
        add(rounds[last].recv, &rounds[last].nrecv, 0, me.first);
        add(rounds[last].recv, &rounds[last].nrecv, me.first + me.count,
            lay->nranks - me.first - me.count);
        return n;
    }
    int partner_out = node + P < N ? node + P : -1;
    if (fold && partner_out >= 0) {
        rounds[0].from = partner_out;
        ibmc_noderd_range_t g = own(lay, partner_out);
        add(rounds[0].recv, &rounds[0].nrecv, g.first, g.count);
    }
    for (int k = 0; k < L; k++) {
        ibmc_noderd_round_t *rd = &rounds[k + fold];
        int span = 1 << k, peer = node ^ span;
        ibmc_noderd_range_t mine = pairs(lay, node & ~(span - 1), span);
        ibmc_noderd_range_t theirs = pairs(lay, peer & ~(span - 1), span);
        rd->to = rd->from = peer;
        add(rd->send, &rd->nsend, mine.first, mine.count);
        add(rd->recv, &rd->nrecv, theirs.first, theirs.count);
    }
    if (fold && partner_out >= 0) {
        ibmc_noderd_round_t *rd = &rounds[last];
        ibmc_noderd_range_t g = own(lay, partner_out);
        rd->to = partner_out;
        add(rd->send, &rd->nsend, 0, g.first);
        add(rd->send, &rd->nsend, g.first + g.count, lay->nranks - g.first - g.count);
    }
    return n;
}

int ibmc_noderd_run(const ibmc_noderd_layout_t * lay, int pos, int limit)
{
    int n = 1;
    while (n < limit && lay->pos_rank[pos + n] == lay->pos_rank[pos] + n)
        n++;
    return n;
}
