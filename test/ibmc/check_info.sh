#!/bin/bash
# check_info.sh IBMC_INFO MODE
#
# Runs the ibmc_info diagnostic (src/mpid/ch4/netmod/ibmc/tools/) and checks
# what it reports against what the machine is:
#   host  a machine without RDMA: the plain "no RDMA devices" report, the
#         CVARs read anyway, the multicast check not run, exit status 1
#   vm    the Soft-RoCE VM (test/vm/run-fabric): device rxe* listed with an
#         Ethernet (RoCE) port and RoCE v2 GIDs, a GID chosen and explained,
#         the multicast check ok, exit status 0
# Prints one line, "PASS: ..." or "FAIL: ...", and exits 0 only on PASS; on
# failure ibmc_info's whole output follows on stderr.
#
# Environment: IBMC_INFO_TIMEOUT  seconds allowed for the run (120)
set -u

if (($# != 2)) || [[ $2 != host && $2 != vm ]]; then
    echo "usage: check_info.sh IBMC_INFO host|vm" >&2
    exit 2
fi
bin=$1 mode=$2

out=$(timeout "${IBMC_INFO_TIMEOUT:-120}" "$bin" 2>&1)
rc=$?

fail() {
    echo "FAIL: ibmc_info ($mode): $*"
    { echo "--- ibmc_info output (exit status $rc):"; printf '%s\n' "$out"; } >&2
    exit 1
}

# want REGEX WHAT: the output has a line matching REGEX (extended grep).
want() { grep -Eq -- "$1" <<<"$out" || fail "no line matching /$1/ ($2)"; }

# Both modes read the CVARs through MPI_T, with or without a device.
want '^ +MPIR_CVAR_IBMC_DEVICE += ' "the CVARs are read through MPI_T"
want '^ +MPIR_CVAR_BCAST_INTRA_ALGORITHM += ' "the broadcast algorithm CVAR is shown"

case $mode in
    host)
        ((rc == 1)) || fail "exit status $rc, want 1 (no RDMA device)"
        want '^ +none: this host has no RDMA devices$' "the no-device message"
        want '^multicast check: not run$' "the multicast check is not run"
        want '^result: ibmc cannot run here' "the summary"
        echo "PASS: ibmc_info (host): no RDMA device reported, CVARs shown, exit status 1"
        ;;
    vm)
        ((rc == 0)) || fail "exit status $rc, want 0"
        want '^device rxe[0-9]+$' "a Soft-RoCE device is listed"
        want '^ +link layer +Ethernet \(RoCE\)$' "its port is RoCE"
        want '^ +state +(PORT_)?(active|ACTIVE) ' "its port is active"
        want '^ +\[ *[0-9]+\] ::ffff:[0-9.]+ +RoCE v2 ' "an IPv4 RoCE v2 GID in the table"
        want '^ +device +rxe[0-9]+ port [0-9]+$' "the chosen device"
        want '^ +GID +\[[0-9]+\] ::ffff:[0-9.]+, RoCE v2' "the chosen GID"
        want '^ +why +RoCE v2 mapping an IPv4 address' "why that GID"
        want '^ +join +ok in ' "the join"
        want '^ +probe +ok: ' "the probe came back"
        want '^multicast check: ok ' "the multicast check passed"
        dev=$(grep -Eo '^ +device +rxe[0-9]+ port [0-9]+' <<<"$out" | awk '{ print $2 " port " $4 }')
        gid=$(grep -Eo '^ +GID +\[[0-9]+\] [^,]+' <<<"$out" | awk '{ print $2 " " $3 }')
        echo "PASS: ibmc_info (vm): $dev, GID $gid, multicast check ok"
        ;;
esac
