/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

#include <mpidimpl.h>
#include "ibmc_pvars.h"

MPIDI_IBMC_pvars_t MPIDI_IBMC_pvars;

#define IBMC_PVAR(field, desc) \
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, "ibmc_" #field, \
                              &MPIDI_IBMC_pvars.field, 1, MPI_T_ENUM_NULL, \
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT, \
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS, \
                              NULL, NULL, "CH4_IBMC", desc)
#define IBMC_PVAR_MCAST(field, desc) \
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, \
                              "ibmc_mcast_" #field, &MPIDI_IBMC_pvars.mcast.field, 1, \
                              MPI_T_ENUM_NULL, MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT, \
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS, \
                              NULL, NULL, "CH4_IBMC", desc)

void MPIDI_IBMC_pvars_register(void)
{
    memset(&MPIDI_IBMC_pvars, 0, sizeof(MPIDI_IBMC_pvars));
    IBMC_PVAR(eager_pkts_sent,
              "RC packets this process sent that carry an active message (its first packet "
              "or a continuation): the eager path.  A rendezvous message adds none.");
    IBMC_PVAR(eager_bytes_sent, "Bytes of the eager packets sent, packet headers included.");
    IBMC_PVAR(compact_send_hdrs,
              "Eager point-to-point messages sent with MPICH's 48-byte send header in its "
              "16-byte form (MPIR_CVAR_IBMC_COMPACT_SEND_HEADER).");
    IBMC_PVAR(lightweight_sends,
              "Of those, messages that MPI_Send, MPI_Isend or a collective sent without an MPIDIG "
              "request, returning MPICH's pre-completed request (MPIR_CVAR_IBMC_LIGHTWEIGHT_SEND).");
    IBMC_PVAR(eager_pkts_recvd, "RC packets this process received that carry an active message.");
    IBMC_PVAR(eager_bytes_recvd,
              "Bytes of the eager packets received, packet headers included.");
    IBMC_PVAR(ctrl_pkts_sent,
              "RC packets sent that carry no message data: the connection handshake's "
              "ready-to-use, rendezvous requests and completions, and credit returns.");
    IBMC_PVAR(rndv_sends,
              "Messages this process sent by rendezvous: the receiver pulled them from the "
              "send buffer with RDMA READ (above MPIR_CVAR_IBMC_EAGER_LIMIT, contiguous).");
    IBMC_PVAR(rndv_recvs, "Messages this process received by rendezvous (RDMA READ).");
    IBMC_PVAR(rndv_packed_recvs,
              "Rendezvous receives into a non-contiguous datatype, read into a bounce buffer "
              "and unpacked; the rest landed directly in the user's buffer.");
    IBMC_PVAR(rndv_windows,
              "Memory windows this process bound for its rendezvous sends: each gives the "
              "receiver read access to exactly one buffer until the transfer ends "
              "(MPIR_CVAR_IBMC_RNDV_WINDOW).");
    IBMC_PVAR(rdma_reads, "RDMA READ work requests posted (a large message takes several).");
    IBMC_PVAR(rdma_read_bytes, "Bytes moved by RDMA READ.");
    IBMC_PVAR(rc_connections,
              "RC queue pairs this process created.  Connections are made on first use, so "
              "this counts the peers this process actually talked to.");
    IBMC_PVAR(credit_stalls,
              "Times a send had to wait because this process had used all the eager credits "
              "a peer gave it (credit-based flow control); each asks that peer for a larger "
              "window.");
    IBMC_PVAR(credit_lends,
              "Times this process grew a peer's eager window because the peer had waited for "
              "credits: MPIR_CVAR_IBMC_EAGER_CREDITS more, up to "
              "MPIR_CVAR_IBMC_EAGER_CREDITS_MAX, lent from receive buffers no peer was "
              "promised.");
    IBMC_PVAR(cm_dropped,
              "Connection datagrams this process refused: another job's, malformed, not sent "
              "from the UD queue pair and port of the rank they name, or a reply that does "
              "not answer this process's request.  Nonzero on a quiet fabric means something "
              "else sends to this job's queue pairs.");
    IBMC_PVAR_MCAST(bcasts,
              "Broadcasts on which this process used the hardware-multicast channel "
              "(MPIR_CVAR_BCAST_INTRA_ALGORITHM=ibmc_mcast), as root or receiver.");
    IBMC_PVAR_MCAST(bcasts_posted,
              "Of those, the nonblocking and persistent ones (MPI_Ibcast, MPI_Start of an "
              "MPI_Bcast_init request, with MPIR_CVAR_IBCAST_INTRA_ALGORITHM=ibmc_mcast), "
              "counted when posted: the progress engine runs them in order, behind the "
              "communicator's earlier broadcasts.");
    IBMC_PVAR_MCAST(pkts_sent,
              "Multicast sends this process posted: one per fragment of each broadcast it was "
              "the root of, whatever the number of receivers.");
    IBMC_PVAR_MCAST(bytes_sent, "Bytes of those multicast packets, headers included.");
    IBMC_PVAR_MCAST(post_calls,
              "ibv_post_send calls that posted them: a root posts every packet its window "
              "allows in one call, so one broadcast that fits the window costs one.");
    IBMC_PVAR_MCAST(send_cqes,
              "Completions of those multicast sends: one for every 16 sends of a call and "
              "one for its last, the others unsignaled.");
    IBMC_PVAR_MCAST(pkts_recvd, "Multicast packets this process received.");
    IBMC_PVAR_MCAST(acks_sent,
              "Multicast acknowledgements this process sent, as RC messages or RDMA writes.");
    IBMC_PVAR_MCAST(acks_written,
              "Of those, the ones written by RDMA into the root's or co-root's ACK board "
              "(MPIR_CVAR_IBMC_MCAST_RDMA_ACKS).");
    IBMC_PVAR_MCAST(acks_read,
              "Multicast acknowledgements other processes wrote on this process's ACK "
              "boards that it read.");
    IBMC_PVAR_MCAST(acks_foreign,
              "Words of another epoch found on this process's ACK boards (a late write of "
              "an earlier channel, or MPIR_CVAR_IBMC_MCAST_FAULTS' late_ack); each member "
              "concerned was asked for its ACK again.");
    IBMC_PVAR_MCAST(naks_sent,
              "Multicast NAKs this process sent over RC: requests for lost packets (each "
              "names a range of them).");
    IBMC_PVAR_MCAST(naks_asked,
              "Of those, the NAKs for losses that a root's (or co-root's) ACK request "
              "revealed: a message of which nothing had come here, or its tail.  Until "
              "this communicator has seen real losses, a member does not NAK those on its "
              "own, since its root may not have sent them yet.");
    IBMC_PVAR_MCAST(naks_spared,
              "Times the NAK timeout ran out but one more poll, which does not give the "
              "processor away, found the data that had come meanwhile: no NAK was sent.");
    IBMC_PVAR_MCAST(naks_premature,
              "Timeout NAKs whose data then came by multicast after all (the root had not "
              "sent it yet, or was not running): each raises that communicator's NAK "
              "timeout to twice the silence it ended, up to 100 ms.");
    IBMC_PVAR_MCAST(naks_deferred,
              "NAK timeouts that ran out more than their own length before this process "
              "looked (it was not running: descheduled, or another thread held the lock): "
              "no NAK was sent, and that communicator's NAK timeout rose to twice the "
              "lateness, up to 100 ms.");
    IBMC_PVAR_MCAST(retransmits,
              "Multicast packets this process sent again over RC in answer to NAKs.");
    IBMC_PVAR_MCAST(ack_probes,
              "ACK requests this process sent as a root whose window stayed full or whose "
              "last packets stayed unacknowledged for the NAK timeout, or as a co-root so "
              "asked: to the members that have not acknowledged everything sent.  A member "
              "that lost packets NAKs them then.  The first request of a stall to several "
              "members is one multicast packet to the group (ibmc_mcast_asks_multicast); a "
              "repeated one goes over RC to each, and a member that died fails it, which "
              "ends the job naming it.");
    IBMC_PVAR_MCAST(asks_multicast,
              "Of those ACK requests, the ones sent as one multicast packet to the whole "
              "group instead of an RC message to each member behind.");
    IBMC_PVAR_MCAST(relays,
              "Multicast packets this process sent over RC to co-roots, as a root or as a "
              "co-root relaying to the co-roots below it (MPIR_CVAR_IBMC_MCAST_SUBGROUP); "
              "0 unless MPIR_CVAR_IBMC_MCAST_COROOT_RELAY is true.");
    IBMC_PVAR_MCAST(arrivals_sent,
              "MPI_Barrier arrivals and small MPI_Allreduce partial results (the "
              "ibmc_mcast algorithms) this process reported to its parent in the board tree, "
              "one per call at every node leader but rank 0 of the node leaders, for its "
              "whole subtree.");
    IBMC_PVAR_MCAST(arrivals_written,
              "Of those, the ones written by RDMA into the parent's board; the others went "
              "as RC messages (no board, no connection yet, or "
              "MPIR_CVAR_IBMC_MCAST_RDMA_ACKS off).");
    IBMC_PVAR_MCAST(arrivals_read,
              "Arrival counts this process's children in the board tree wrote on its "
              "board that it read.");
    IBMC_PVAR_MCAST(coroot_acks,
              "Acknowledgements this process sent as a co-root, each covering its subgroup "
              "and the co-roots below it in the relay tree.");
    IBMC_PVAR_MCAST(tree_acks,
              "Of those, the ones sent to a parent co-root rather than to the root: RC "
              "messages naming the root, never RDMA writes.");
    IBMC_PVAR_MCAST(copies,
              "Fragment payloads the multicast channel copied: a receiver's into the "
              "broadcast's buffer, or into a slot for a later broadcast and out of it when "
              "that broadcast is posted; a root's into its send ring; a co-root's into its "
              "relay ring.  Without loss, one per fragment at every process, two at a "
              "receiver whose broadcast was posted after its packets came.");
    IBMC_PVAR_MCAST(in_place,
              "Fragment payloads of MPI_Bcast_init broadcasts the device wrote straight "
              "to their place in the request's buffer, with no copy "
              "(MPIR_CVAR_IBMC_MCAST_RECV_IN_PLACE).  Without loss, one per fragment at "
              "every receiving node leader whose MPI_Start came before the root's packets.");
    IBMC_PVAR_MCAST(place_armed,
              "MPI_Start broadcasts whose receives were posted at their fragments' places.");
    IBMC_PVAR_MCAST(place_ended,
              "Of those, the ones whose receives still posted were taken back (the queue "
              "pair flushed): a packet that was not the fragment expected, a lost one, an RC "
              "copy, or the end of a broadcast that came partly by copies.");
    IBMC_PVAR_MCAST(place_recvd,
              "Multicast packets the in-place receive queues took, beside the main queue's "
              "ibmc_mcast_pkts_recvd: the device hands an armed receiver every packet of its "
              "group.");
    IBMC_PVAR_MCAST(place_strays,
              "Packets of the group that were no fragment of the armed broadcast (a root's "
              "question, another message's packet, a duplicate) and took one of its "
              "in-place receives: before any fragment came, the receives start over.");
    IBMC_PVAR_MCAST(place_moved,
              "Fragments that landed one receive late behind such a packet and were moved to "
              "their place: copies, counted in ibmc_mcast_copies too.");
    IBMC_PVAR_MCAST(shadowed,
              "The main queue's twins of fragments received in place, dropped uncopied "
              "(never counted as duplicates).");
    IBMC_PVAR_MCAST(place_refused,
              "MPI_Bcast_init requests this process receives by copies because no in-place "
              "receiver could be made (the buffer could not be registered, or the device "
              "has too few receive work requests), or because the device refused one later "
              "(an attach to the group, a restart); MPIR_CVAR_IBMC_STATS prints the "
              "reasons.");
    IBMC_PVAR_MCAST(duplicates,
              "Multicast packets dropped because they were already delivered or held.");
    IBMC_PVAR_MCAST(echoes,
              "This process's own multicast packets that the device looped back to it, "
              "dropped: a device delivers a group's packets to every attached queue pair of "
              "the host, the sender's included unless ibmc_mcast_loopback_blocked is 1.");
    IBMC_PVAR_MCAST(loopback_blocked,
              "1 if this process's multicast queue pair was created with the device's "
              "self-loopback block (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB), so that its own "
              "packets do not come back to it and ibmc_mcast_echoes stays 0; 0 if the device "
              "refused the flag (Soft-RoCE does) or the channel is not set up yet.");
    IBMC_PVAR_MCAST(dropped,
              "Multicast packets dropped unread: another job's or communicator's, an earlier "
              "use of the group, malformed, not from the message's root, or beyond the "
              "window.");
    IBMC_PVAR_MCAST(foreign,
              "Of those, the multicast packets of another communicator or job: one that "
              "shares a group with this process's communicators, its header or its sender "
              "no member of theirs.  0 while every communicator that broadcasts at once "
              "has a group of its own (MPIR_CVAR_IBMC_MCAST_GROUPS has room).");
    IBMC_PVAR_MCAST(faults,
              "Multicast packets the fault injector dropped (MPIR_CVAR_IBMC_MCAST_FAULTS).");
    IBMC_PVAR_MCAST(recoveries,
              "Broadcasts this process received that lost packets and asked for them again "
              "(one or more NAKs).");
    IBMC_PVAR_MCAST(recovery_us,
              "Microseconds those broadcasts took from their first NAK to the whole message "
              "in place, summed: divided by ibmc_mcast_recoveries, the mean recovery time.");
    IBMC_PVAR_MCAST(recovery_worst_us,
              "The longest of those recoveries, in microseconds (never decreases).");
    IBMC_PVAR_MCAST(fallbacks,
              "Broadcasts that asked for the multicast channel and ran MPICH's binomial "
              "algorithm instead (MPIR_CVAR_IBMC_STATS prints why).");
    IBMC_PVAR_MCAST(groups, "Multicast groups this process is a member of now.");
    IBMC_PVAR_MCAST(group_swaps,
              "Times this process left a multicast group no channel used, to join the "
              "group of a new communicator instead: with every one of its "
              "MPIR_CVAR_IBMC_MCAST_GROUPS groups held, a communicator of a new lowest "
              "world rank needed one.  Each is a join/leave cycle at the subnet manager.");
    IBMC_PVAR_MCAST(groups_shared,
              "Channels this process set up on a group that another of its channels was "
              "using (the pool had no group of their own for them): their members receive "
              "each other's packets and drop them (ibmc_mcast_foreign).");
    IBMC_PVAR_MCAST(boards,
              "ACK boards this process has registered for its multicast channels, in use or "
              "kept for reuse (MPIR_CVAR_IBMC_MCAST_RDMA_ACKS).");
    IBMC_PVAR(node_rd_allgathers,
              "MPI_Allgather calls that ran ibmc_node_rd over the node-shared segments.");
    IBMC_PVAR(node_rd_writes,
              "RDMA writes of blocks into other nodes' segments by ibmc_node_rd (only a node's "
              "leader posts them: one per partner node and round).");
    IBMC_PVAR(node_rd_write_bytes, "Bytes those RDMA writes carried.");
    IBMC_PVAR(node_rd_flag_writes,
              "RDMA writes of the 8-byte arrival flag that follows each round's data.");
    IBMC_PVAR(node_rd_copies,
              "Copies between this process's buffers and its node's segment (one in, and one "
              "out per run of blocks).");
    IBMC_PVAR(node_rd_mcast_bcasts,
              "Broadcasts of one node's blocks over the multicast channel by ibmc_node_rd "
              "(MPIR_CVAR_IBMC_NODE_RD_MCAST_MIN), counted by each node's leader, as root "
              "or receiver: the number of nodes per call.");
    IBMC_PVAR(node_rd_fallbacks,
              "MPI_Allgather calls that asked for ibmc_node_rd and ran a stock algorithm "
              "instead (MPIR_CVAR_IBMC_STATS prints why).");
}
