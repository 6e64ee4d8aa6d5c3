# Sourced by autogen.sh and the build scripts: which MPICH ibmc patches, and
# how to obtain it.  Debian 12 ships the upstream release tarball unmodified
# as its "orig" tarball, which is how these machines can fetch it.
MPICH_VERSION=4.0.2
MPICH_TARBALL_NAME=mpich_4.0.2.orig.tar.xz
MPICH_SHA256=b27039f964afeb6b8a3e009c56b441cbe368c26d6d6476ad3bb7190996875860
MPICH_DEBIAN_SOURCE="mpich=4.0.2-3"
IBMC_CACHE=${IBMC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ibmc}

ibmc_die() { echo "ibmc: error: $*" >&2; exit 1; }

ibmc_sha256() { sha256sum "$1" | cut -d' ' -f1; }

# Print the path of a verified MPICH tarball, downloading it from Debian's
# source archive into the cache if needed.
ibmc_mpich_tarball() {
    local want=${1:-} dir="$IBMC_CACHE/src" got
    if [ -n "$want" ]; then
        [ -f "$want" ] || ibmc_die "MPICH tarball $want does not exist"
    else
        want="$dir/$MPICH_TARBALL_NAME"
        if [ ! -f "$want" ]; then
            mkdir -p "$dir"
            echo "ibmc: fetching MPICH $MPICH_VERSION from Debian's source archive ($MPICH_DEBIAN_SOURCE)" >&2
            if ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
                ibmc_die "apt has no deb-src entry for bookworm. Add one (see README), or pass --with-mpich-tarball=FILE"
            fi
            (cd "$dir" && apt-get source --download-only "$MPICH_DEBIAN_SOURCE" >&2) ||
                ibmc_die "apt-get source $MPICH_DEBIAN_SOURCE failed; pass --with-mpich-tarball=FILE"
        fi
    fi
    got=$(ibmc_sha256 "$want")
    [ "$got" = "$MPICH_SHA256" ] ||
        ibmc_die "$want has sha256 $got, expected $MPICH_SHA256 (MPICH $MPICH_VERSION release tarball)"
    echo "$want"
}
