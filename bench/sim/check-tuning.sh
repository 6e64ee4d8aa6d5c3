#!/bin/sh
# Test of bench/sim/tuning.py, the selection-file generator: on a small
# projection where ibmc_mcast wins from 4 nodes up, ties at 2, and on a
# stand-in for MPICH's default file, the output must pick ibmc_mcast for
# MPI_Bcast of at most the projected size on communicators of 4 or more,
# keep MPICH's bcast subtree for everything else, and leave every other
# collective as it was.  A projection where ibmc_mcast never wins must
# write no file.  Then the committed src/mpi/coll/ibmc/ibmc-sim-tuning.json
# must be MPICH's default with only the intra-communicator bcast subtree
# changed: MPICH's file comes from ../../mpich (after ./autogen.sh), else
# from the verified MPICH tarball (maint/mpich-source.sh, which fetches it
# when it is not cached).
cd "$(dirname "$0")" || exit 1
TMP=$(mktemp -d /tmp/ibmc_check_tuning.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT
hdr='what	nodes	size	variant	mean_lat_us'
printf '%s\n' "$hdr" \
    "lat	2	1	ibmc_mcast:coroots	1.02" "lat	2	1	smpi:binomial_tree	1.00" \
    "lat	4	1	ibmc_mcast:coroots	1.06" "lat	4	1	smpi:binomial_tree	2.00" \
    "lat	8	1	ibmc_mcast:coroots	1.10" "lat	8	1	smpi:binomial_tree	3.00" \
    "lat	2	1024	ibmc_mcast:coroots	1.10" "lat	2	1024	smpi:binomial_tree	1.04" \
    "lat	4	1024	ibmc_mcast:coroots	1.14" "lat	4	1024	smpi:binomial_tree	2.08" \
    "lat	8	1024	ibmc_mcast:coroots	1.18" "lat	8	1024	smpi:binomial_tree	3.12" >"$TMP/win.tsv"
cat >"$TMP/generic.json" <<'JSON'
{"collective=bcast": {"comm_type=intra": {"avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_binomial": {}}},
                      "comm_type=inter": {"algorithm=MPIR_Bcast_inter_remote_send_local_bcast": {}}},
 "collective=barrier": {"comm_type=intra": {"algorithm=MPIR_Barrier_intra_dissemination": {}}}}
JSON
python3 tuning.py "$TMP/win.tsv" "$TMP/generic.json" "$TMP/out.json" 2>/dev/null ||
    { echo "FAIL: tuning.py failed on a winning projection"; exit 1; }
python3 - "$TMP/out.json" "$TMP/generic.json" <<'PY' || exit 1
import json, sys
out, gen = (json.load(open(p)) for p in sys.argv[1:])
stock = gen["collective=bcast"]["comm_type=intra"]
want = {"comm_size<4": stock,
        "comm_size=any": {"avg_msg_size<=1024": {"algorithm=MPIR_Bcast_intra_ibmc_mcast": {}},
                          "avg_msg_size=any": stock}}
bad = []
if out["collective=bcast"]["comm_type=intra"] != want:
    bad.append("bcast intra subtree: %s" % json.dumps(out["collective=bcast"]["comm_type=intra"]))
if out["collective=bcast"]["comm_type=inter"] != gen["collective=bcast"]["comm_type=inter"]:
    bad.append("bcast inter subtree changed")
if out["collective=barrier"] != gen["collective=barrier"]:
    bad.append("barrier changed")
if bad:
    sys.exit("FAIL: " + "; ".join(bad))
PY
sed 's/\tsmpi:binomial_tree\t[0-9.]*$/\tsmpi:binomial_tree\t0.5/' "$TMP/win.tsv" >"$TMP/lose.tsv"
if python3 tuning.py "$TMP/lose.tsv" "$TMP/generic.json" "$TMP/none.json" 2>/dev/null ||
    [ -e "$TMP/none.json" ]; then
    echo "FAIL: tuning.py wrote a file where ibmc_mcast never wins"; exit 1
fi
generic=../../mpich/maint/tuning/coll/mpir/generic.json
committed=../../src/mpi/coll/ibmc/ibmc-sim-tuning.json
if [ ! -f "$generic" ]; then
    # shellcheck source=../../maint/mpich-source.sh
    tarball=$(. ../../maint/mpich-source.sh && ibmc_mpich_tarball) ||
        { echo "FAIL: no MPICH source to compare the selection file with"; exit 1; }
    tar -xJOf "$tarball" --wildcards '*/maint/tuning/coll/mpir/generic.json' >"$TMP/mpich-generic.json" ||
        { echo "FAIL: $tarball has no maint/tuning/coll/mpir/generic.json"; exit 1; }
    generic=$TMP/mpich-generic.json
fi
python3 - "$committed" "$generic" <<'PY' || exit 1
import json, sys
out, gen = (json.load(open(p)) for p in sys.argv[1:])
intra = out["collective=bcast"].pop("comm_type=intra")
gen["collective=bcast"].pop("comm_type=intra")
if out != gen:
    sys.exit("FAIL: %s differs from MPICH's default beyond the bcast intra subtree" % sys.argv[1])
if "algorithm=MPIR_Bcast_intra_ibmc_mcast" not in json.dumps(intra):
    sys.exit("FAIL: %s does not pick ibmc_mcast" % sys.argv[1])
PY
echo "ok: tuning.py picks ibmc_mcast where it wins and nothing else; the committed file is MPICH's default plus that"
