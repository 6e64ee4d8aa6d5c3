##
## Copyright (C) by the ibmc authors.
##     See COPYRIGHT in top-level directory
##

# ibmc's MPIR collective algorithms.  src/mpi/coll is built for every device;
# without ch4:ibmc each algorithm runs a stock one.

mpi_core_sources += src/mpi/coll/ibmc/bcast_intra_ibmc_mcast.c
mpi_core_sources += src/mpi/coll/ibmc/allgather_intra_ibmc_node_rd.c
