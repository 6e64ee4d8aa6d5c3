# bench/lib.sh: what the benchmark scripts share; sourced, not run.
#
# bench_paths: sets here (bench/), top (the checkout), cache ($IBMC_CACHE,
# default ~/.cache/ibmc of the account: the VM sets HOME=/tmp) and prefix
# ($IBMC_PREFIX, default the ibmc install under the cache).
bench_paths() {
    here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[1]}")")" && pwd)
    top=$(dirname "$here")
    local home
    home=$(getent passwd "$(id -un)" | cut -d: -f6)
    cache=${IBMC_CACHE:-${home:-/tmp}/.cache/ibmc}
    prefix=${IBMC_PREFIX:-$cache/install/ibmc-default}
}

# bench_conditions FILE [LINE...]: the conditions a run had (date, kernel,
# CPUs, device, MTU, VM or host, MPI prefix), as "# " lines that
# bench/benchdata.py reads, then each extra LINE the same way.
bench_conditions() {
    local file=$1 dev
    shift
    dev=$(ls /sys/class/infiniband 2> /dev/null | head -1)
    {
        echo "# $(date -u '+%Y-%m-%d %H:%M') UTC, $(uname -r), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)),"
        echo "# devices: $(ls /sys/class/infiniband 2> /dev/null | xargs), prefix $prefix"
        echo "# mtu $(ibv_devinfo -d "$dev" 2> /dev/null | awk '/active_mtu/ {print $2; exit}')"
        echo "# vm $([ -n "${IBMC_IN_VM:-}" ] && echo yes || echo no)"
        for line in "$@"; do echo "# $line"; done
    } > "$file"
}

# bench_needs_vm: true when this is a host without an RDMA device, where a
# benchmark re-runs itself in the Soft-RoCE VM (test/vm/run-fabric).
bench_needs_vm() {
    [ -z "${IBMC_IN_VM:-}" ] && ! compgen -G '/sys/class/infiniband/*' > /dev/null
}
