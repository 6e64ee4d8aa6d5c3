[#] start of __file__
dnl MPICH_SUBCFG_AFTER=src/mpid/ch4

AC_DEFUN([PAC_SUBCFG_PREREQ_]PAC_SUBCFG_AUTO_SUFFIX,[
    AM_COND_IF([BUILD_CH4],[
        for net in $ch4_netmods ; do
            AS_CASE([$net],[ibmc],[build_ch4_netmod_ibmc=yes])
            if test $net = "ibmc" ; then
                AC_DEFINE(HAVE_CH4_NETMOD_IBMC,1,[ibmc netmod is built])
                if test "$build_ch4_locality_info" != "yes" ; then
                    AC_DEFINE(MPIDI_BUILD_CH4_LOCALITY_INFO, 1, [CH4 should build locality info])
                    build_ch4_locality_info="yes"
                fi
            fi
        done
    ])
    AM_CONDITIONAL([BUILD_CH4_NETMOD_IBMC],[test "X$build_ch4_netmod_ibmc" = "Xyes"])
])dnl

AC_DEFUN([PAC_SUBCFG_BODY_]PAC_SUBCFG_AUTO_SUFFIX,[
AM_COND_IF([BUILD_CH4_NETMOD_IBMC],[
    AC_MSG_NOTICE([RUNNING CONFIGURE FOR ch4:ibmc])

    dnl ibmc talks to the HCA through rdma-core directly: libibverbs for the
    dnl queue pairs, librdmacm for multicast joins.
    AC_CHECK_HEADER([infiniband/verbs.h], [],
        [AC_MSG_ERROR([ch4:ibmc needs infiniband/verbs.h from rdma-core (Debian/Ubuntu: apt-get install libibverbs-dev)])])
    AC_CHECK_LIB([ibverbs], [ibv_open_device], [PAC_LIBS_ADD([-libverbs])],
        [AC_MSG_ERROR([ch4:ibmc needs libibverbs from rdma-core (Debian/Ubuntu: apt-get install libibverbs-dev)])])
    AC_CHECK_DECL([ibv_query_gid_ex], [],
        [AC_MSG_ERROR([ch4:ibmc needs rdma-core 36 or newer (ibv_query_gid_ex)])],
        [#include <infiniband/verbs.h>])
    AC_CHECK_HEADER([rdma/rdma_cma.h], [],
        [AC_MSG_ERROR([ch4:ibmc needs rdma/rdma_cma.h from rdma-core (Debian/Ubuntu: apt-get install librdmacm-dev)])])
    AC_CHECK_LIB([rdmacm], [rdma_join_multicast], [PAC_LIBS_ADD([-lrdmacm])],
        [AC_MSG_ERROR([ch4:ibmc needs librdmacm from rdma-core (Debian/Ubuntu: apt-get install librdmacm-dev)])])
])dnl end AM_COND_IF(BUILD_CH4_NETMOD_IBMC,...)
])dnl end _BODY

[#] end of __file__
