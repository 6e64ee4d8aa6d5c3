##
## Copyright (C) by the ibmc authors.
##     See COPYRIGHT in top-level directory
##

if BUILD_CH4_NETMOD_IBMC

noinst_HEADERS     += src/mpid/ch4/netmod/ibmc/ibmc_pre.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_impl.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_types.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_verbs.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_err.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_wire.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_devsel.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_cm_fsm.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_cm_msg.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_cookie.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_am_check.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_heapwatch.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_frag.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_pkt.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_rcache.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_credit.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_finbar.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_pvars.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_send.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_coll.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_noderd.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_ipoib.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_nodeseg.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_nodeseg_impl.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_util.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_buffers.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_wr.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_device.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_mem.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_qp_fault.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_ud.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_conn.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_sendq.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_rndv.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_am_recv.h \
                      src/mpid/ch4/netmod/ibmc/ibmc_finalize.h

mpi_core_sources   += src/mpid/ch4/netmod/ibmc/func_table.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_globals.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_util.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_buffers.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_init.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_finalize.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_finbar.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_device.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_devsel.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_verbs.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_conn.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_cm_fsm.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_cm_msg.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_cookie.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_am_check.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_heapwatch.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_ud.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_qp_fault.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_frag.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_pkt.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_sendq.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_am_send.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_am_recv.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_rndv.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_rcache.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_credit.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_pvars.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_mem.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_progress.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_hooks.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_noderd.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_ipoib.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_nodeseg.c \
                      src/mpid/ch4/netmod/ibmc/ibmc_node_allgather.c

# the multicast channel: its verbs-free engine and pure parts, and the
# netmod's verbs side (mcast/ibmc_mcast_impl.h)
noinst_HEADERS     += src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast.h \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_impl.h \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_engine.h \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_wire.h \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_rx.h \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_tx.h \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_coroot.h \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_board.h \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_arrive.h \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_pool.h \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_faults.h

mpi_core_sources   += src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_engine.c \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_rx.c \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_tx.c \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_coroot.c \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_board.c \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_arrive.c \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_pool.c \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_faults.c \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_device.c \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_recv.c \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_finalize.c \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_io.c \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_group.c \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_setup.c \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_place.c \
                      src/mpid/ch4/netmod/ibmc/mcast/ibmc_mcast_bcast.c

errnames_txt_files += src/mpid/ch4/netmod/ibmc/errnames.txt

# ibmc_info: what this host offers ibmc (devices, GIDs, the choice a process
# would make, the CVARs in force, a multicast check), installed beside
# mpiexec.  It links libmpi only for MPI_T and uses the netmod's own device
# selection (ibmc_devsel.c).
bin_PROGRAMS += src/mpid/ch4/netmod/ibmc/tools/ibmc_info
noinst_HEADERS += src/mpid/ch4/netmod/ibmc/tools/ibmc_info.h
src_mpid_ch4_netmod_ibmc_tools_ibmc_info_SOURCES = \
    src/mpid/ch4/netmod/ibmc/tools/ibmc_info.c \
    src/mpid/ch4/netmod/ibmc/tools/ibmc_info_cvars.c \
    src/mpid/ch4/netmod/ibmc/tools/ibmc_info_dev.c \
    src/mpid/ch4/netmod/ibmc/tools/ibmc_info_mcast.c \
    src/mpid/ch4/netmod/ibmc/ibmc_devsel.c \
    src/mpid/ch4/netmod/ibmc/ibmc_ipoib.c
src_mpid_ch4_netmod_ibmc_tools_ibmc_info_CPPFLAGS = $(AM_CPPFLAGS) \
    -I$(top_srcdir)/src/mpid/ch4/netmod/ibmc
src_mpid_ch4_netmod_ibmc_tools_ibmc_info_LDADD = lib/lib@MPILIBNAME@.la -lrdmacm -libverbs -lhwloc

endif
