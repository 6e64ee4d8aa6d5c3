/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* The plan of ibmc_node_rd's MPI_Allgather: where each rank's block sits in
 * the node-shared segments, and which blocks each node writes into which
 * other node's segment in each round.  Pure logic, unit-tested on the host
 * (test/unit/test_noderd.c); ibmc_nodeseg.c carries it out with RDMA writes.
 *
 * The schedule is recursive doubling across nodes, not processes (seed 001
 * §4): one RDMA write per node pair per round, whatever the number of
 * processes on each node.  Seed 001 handles only a power of two of nodes
 * with consecutive ranks on each; this plan takes any node count, any
 * number of processes per node and any placement of ranks:
 *
 * - Nodes are numbered in the order of their lowest rank.  With P the
 *   largest power of two not above the node count N, nodes 0..P-1 are the
 *   core and node P+v (v < N-P) is core node v's partner outside it.
 * - The segment is laid out by pairs: core node v's blocks, then its
 *   partner's, then core node v+1's, and so on; inside a node, its ranks in
 *   increasing order.  After k doublings a core node holds a run of 2^k
 *   pairs, which is one contiguous range: every round's data is one write.
 * - When N is not a power of two, two rounds frame the doublings: first each
 *   outside node writes its blocks to its core partner ("fold-in"), last the
 *   core node writes everything else back to it ("fold-out": the ranges
 *   before and after the partner's own blocks, two writes, so that no block
 *   reaches a node twice).  That is log2(P) + 2 rounds.
 *
 * Every node computes the same plan from the same node map, so a write
 * lands at the same offset in the partner's segment as it has in the
 * writer's. */

#ifndef IBMC_NODERD_H_INCLUDED
#define IBMC_NODERD_H_INCLUDED

#include <stdint.h>

/* fold-in, up to 31 doublings (2^31 nodes), fold-out */
#define IBMC_NODERD_MAX_ROUNDS 33

/* Blocks [first, first + count) in segment order. */
typedef struct {
    int first, count;
} ibmc_noderd_range_t;

/* What one node does in one round: write ranges `send` into node `to`'s
 * segment and/or receive ranges `recv` from node `from` (-1: nothing). */
typedef struct {
    int to, from;
    int nsend, nrecv;
    ibmc_noderd_range_t send[2], recv[2];
} ibmc_noderd_round_t;

/* Where blocks go.  Arrays are the caller's: node_first and node_count of
 * nnodes entries, pos_rank and rank_pos of nranks. */
typedef struct {
    int nnodes, nranks;
    int core;                   /* P: the largest power of two <= nnodes */
    int *node_first;            /* a node's first block */
    int *node_count;            /* its ranks */
    int *pos_rank;              /* the rank whose block is at a position */
    int *rank_pos;              /* the position of a rank's block */
} ibmc_noderd_layout_t;

/* Fill `lay` for nranks ranks, rank r on node node_of_rank[r].  Node
 * indices must run from 0 to nnodes-1, numbered in order of their lowest
 * rank (ibmc_noderd_number_nodes does that).  Returns 0, or -1 when the
 * node indices are not so. */
int ibmc_noderd_layout(ibmc_noderd_layout_t * lay, int nranks, const int *node_of_rank,
                       int nnodes);

/* Renumber arbitrary node ids (node_id[r] >= 0) into node indices in order
 * of each node's lowest rank; returns the number of nodes.  scratch holds
 * nranks ints. */
int ibmc_noderd_number_nodes(int nranks, const int *node_id, int *node_of_rank, int *scratch);

/* The rounds of node `node`; returns their number, the same for every node
 * of the layout (0 with one node). */
int ibmc_noderd_rounds(const ibmc_noderd_layout_t * lay, int node,
                       ibmc_noderd_round_t rounds[IBMC_NODERD_MAX_ROUNDS]);

/* The number of positions from `pos` (at most `limit`) whose ranks are
 * consecutive: one copy serves them when the receive buffer is laid out by
 * rank. */
int ibmc_noderd_run(const ibmc_noderd_layout_t * lay, int pos, int limit);

#endif /* IBMC_NODERD_H_INCLUDED */
