/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Fault injection on the multicast receive path, a testing knob
 * (MPIR_CVAR_IBMC_MCAST_FAULTS="drop=0.1,dup=0.05,reorder=0.05,seed=7").
 * Soft-RoCE loses no packet on its own, so this is how every recovery path
 * is exercised on a real device: each received multicast packet, before the
 * protocol sees it, is dropped, delivered twice, or held back and delivered
 * after the next one, with the given probabilities, deterministically for a
 * seed (each process mixes in its rank, so receivers lose different
 * packets).
 *
 * The filter works on opaque items (the caller's receive buffers) and says
 * for each one handed back whether to deliver it to the protocol and
 * whether the caller may then repost it.  A held item waits for the next
 * packet or for ibmc_mcast_faults_flush, which the caller calls when its
 * completion queue is empty, so a held packet is late, never lost.
 *
 * late_ack=P is a fault of the ACK board (ibmc_mcast_board.h), on the
 * sending side: after a member writes an ACK into a board, with probability
 * P it writes a word of the previous epoch over it, as a member of an
 * earlier channel on the same board would if its write came late.  The
 * owner must take it for foreign and ask again.
 *
 * Pure logic, unit-tested on the host (test/unit/test_mcast_faults.c). */

#ifndef IBMC_MCAST_FAULTS_H_INCLUDED
#define IBMC_MCAST_FAULTS_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

typedef struct {
    double drop, dup, reorder;
    double late_ack;            /* the ACK board's fault, not the receive path's */
    uint64_t seed;
    int enabled;                /* any of drop, dup and reorder above zero */
} ibmc_mcast_faults_spec_t;

typedef struct {
    ibmc_mcast_faults_spec_t spec;
    uint64_t rng;
    void *held;
    uint64_t dropped, duplicated, reordered, late_acks;
} ibmc_mcast_faults_t;

typedef struct {
    void *item;
    uint8_t deliver;            /* hand it to the protocol */
    uint8_t release;            /* then the caller may reuse it */
} ibmc_mcast_fault_out_t;

/* Parse a spec: comma-separated key=value pairs, keys drop, dup, reorder
 * (probabilities, summing to at most 1), late_ack (a probability) and seed
 * (an unsigned integer).
 * NULL or "" means no faults.  Returns 0, or -1 with the reason in err
 * (the caller names the CVAR around it). */
int ibmc_mcast_faults_parse(const char *text, ibmc_mcast_faults_spec_t * spec, char *err,
                            size_t err_len);

/* salt (the process's rank) makes each process's faults its own. */
void ibmc_mcast_faults_init(ibmc_mcast_faults_t * f, const ibmc_mcast_faults_spec_t * spec,
                            uint64_t salt);

/* One received item: writes 0 to 3 entries to out and returns how many,
 * in the order the caller must handle them. */
int ibmc_mcast_faults_filter(ibmc_mcast_faults_t * f, void *item, ibmc_mcast_fault_out_t out[3]);

/* Hand back a held item, if any (returns 0 or 1 entries). */
int ibmc_mcast_faults_flush(ibmc_mcast_faults_t * f, ibmc_mcast_fault_out_t out[1]);

/* An ACK was just written: 1 if a late write of the previous epoch is to
 * follow it (late_ack), counted in late_acks. */
int ibmc_mcast_faults_late_ack(ibmc_mcast_faults_t * f);

#endif /* IBMC_MCAST_FAULTS_H_INCLUDED */
