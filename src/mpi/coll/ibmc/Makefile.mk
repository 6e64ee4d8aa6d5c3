##
## Copyright (C) by the ibmc authors.
##     See COPYRIGHT in top-level directory
##

# ibmc's MPIR collective algorithms.  src/mpi/coll is built for every device;
# without ch4:ibmc each algorithm runs a stock one.

mpi_core_sources += src/mpi/coll/ibmc/bcast_intra_ibmc_mcast.c
mpi_core_sources += src/mpi/coll/ibmc/ibcast_intra_ibmc_mcast.c
mpi_core_sources += src/mpi/coll/ibmc/allgather_intra_ibmc_node_rd.c
mpi_core_sources += src/mpi/coll/ibmc/allreduce_intra_ibmc_mcast.c
mpi_core_sources += src/mpi/coll/ibmc/barrier_intra_ibmc_mcast.c
noinst_HEADERS += src/mpi/coll/ibmc/ibmc_knomial.h

# The opt-in selection file generated from the simulator's projection
# (bench/sim/tuning.py), kept beside MPICH's own tuning files:
# $(datadir)/ibmc/ibmc-sim-tuning.json, for
# MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE.
ibmc_tuningdir = $(datadir)/ibmc
ibmc_tuning_DATA = maint/tuning/coll/ibmc/ibmc-sim-tuning.json
EXTRA_DIST += maint/tuning/coll/ibmc/ibmc-sim-tuning.json
