#!/bin/sh
# Test of bench/sim/tuning.py, the selection-file generator (barrier and
# allreduce rules below): on a small
# projection where ibmc_mcast wins from 4 nodes up, ties at 2, and on a
# stand-in for MPICH's default file, the output must pick ibmc_mcast for
# MPI_Bcast of at most the projected size on communicators of 4 or more,
# keep MPICH's bcast subtree for everything else, and leave every other
# collective as it was.  With an Allgather projection of 4 processes a
# node where ibmc_node_rd wins from 8 nodes up at 8 B only, it must also
# pick ibmc_node_rd for MPI_Allgather on communicators of 32 or more, up to
# 8 B x the low end of each doubling of the communicator's size in all
# (MPICH sizes an allgather only by total_msg_size).  A projection where
# ibmc_mcast never wins
# must write no file.  Then the committed maint/tuning/coll/ibmc/ibmc-sim-tuning.json
# must be MPICH's default with only the intra-communicator bcast and
# allgather subtrees changed, and may ask for avg_msg_size only under the
# collectives MPICH's csel.c defines it for (get_avg_msgsize; any other
# fails an assertion in MPICH at the first call): MPICH's files come from
# ../../mpich (after ./autogen.sh), else from the verified MPICH tarball
# (maint/mpich-source.sh, which fetches it when it is not cached).
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
hdr='what	nodes	ppn	size	variant	mean_lat_us'
printf '%s\n' "$hdr" \
    "ag	2	4	8	ibmc_node_rd:overlap	1.0" "ag	2	4	8	smpi:mpich	1.1" \
    "ag	8	4	8	ibmc_node_rd:overlap	2.0" "ag	8	4	8	smpi:mpich	4.0" \
    "ag	64	4	8	ibmc_node_rd:overlap	3.0" "ag	64	4	8	smpi:mpich	7.0" \
    "ag	8	4	1024	ibmc_node_rd:overlap	5.0" "ag	8	4	1024	smpi:mpich	5.5" \
    "ag	64	4	1024	ibmc_node_rd:overlap	9.0" "ag	64	4	1024	smpi:mpich	9.5" >"$TMP/ag.tsv"
cat >"$TMP/generic.json" <<'JSON'
{"collective=bcast": {"comm_type=intra": {"avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_binomial": {}}},
                      "comm_type=inter": {"algorithm=MPIR_Bcast_inter_remote_send_local_bcast": {}}},
 "collective=allgather": {"comm_type=intra": {"algorithm=MPIR_Allgather_intra_ring": {}},
                          "comm_type=inter": {"algorithm=MPIR_Allgather_inter_local_gather_remote_bcast": {}}},
 "collective=barrier": {"comm_type=intra": {"comm_hierarchy=parent": {"algorithm=MPIR_Barrier_intra_smp": {}},
                                            "comm_hierarchy=any": {"algorithm=MPIR_Barrier_intra_dissemination": {}}}},
 "collective=allreduce": {"comm_type=intra": {"avg_msg_size<=8": {"algorithm=MPIR_Allreduce_intra_recursive_doubling": {}},
                                              "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather": {}}}}}
JSON
python3 tuning.py "$TMP/win.tsv" "$TMP/generic.json" "$TMP/out.json" --allgather "$TMP/ag.tsv" \
    2>/dev/null || { echo "FAIL: tuning.py failed on a winning projection"; exit 1; }
python3 - "$TMP/out.json" "$TMP/generic.json" <<'PY' || exit 1
import json, sys
out, gen = (json.load(open(p)) for p in sys.argv[1:])
ag = gen["collective=allgather"]["comm_type=intra"]
pick = {"algorithm=MPIR_Allgather_intra_ibmc_node_rd": {}}
want = {"comm_size<32": ag}
lo = 32
while 8 * lo * 4 <= 2**31 - 1:
    want["comm_size<%d" % (2 * lo)] = {"total_msg_size<=%d" % (8 * lo): pick, "total_msg_size=any": ag}
    lo *= 2
want["comm_size=any"] = {"total_msg_size<=%d" % (8 * lo): pick, "total_msg_size=any": ag}
if out["collective=allgather"]["comm_type=intra"] != want:
    sys.exit("FAIL: allgather intra subtree: %s" % json.dumps(out["collective=allgather"]["comm_type=intra"]))
if out["collective=allgather"]["comm_type=inter"] != gen["collective=allgather"]["comm_type=inter"]:
    sys.exit("FAIL: allgather inter subtree changed")
del out["collective=allgather"], gen["collective=allgather"]
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
if out["collective=allreduce"] != gen["collective=allreduce"]:
    bad.append("allreduce changed")
if bad:
    sys.exit("FAIL: " + "; ".join(bad))
PY
# the barrier wins from 64 nodes up (ties at 8); the allreduce at 8 B from
# 64 nodes up, and at 1024 B too, which the board tree does not take (its
# win is ibmc_mcast's RC reduce's): the rules must say just that, for
# communicators that are no parent (barrier) and commutative operations
# (allreduce), and --extend must replace them, not stack them
hdr='what	nodes	size	variant	mean_lat_us'
printf '%s\n' "$hdr" \
    "bar	8	0	ibmc_mcast	2.0" "bar	8	0	smpi:ompi_bruck	2.1" \
    "bar	64	0	ibmc_mcast	2.0" "bar	64	0	smpi:ompi_bruck	6.0" \
    "bar	1024	0	ibmc_mcast	4.0" "bar	1024	0	smpi:ompi_bruck	13.0" >"$TMP/bar.tsv"
printf '%s\n' "$hdr" \
    "ar	8	8	ibmc_mcast	2.0" "ar	8	8	smpi:rdb	2.2" \
    "ar	64	8	ibmc_mcast	3.0" "ar	64	8	smpi:rdb	6.0" \
    "ar	64	1024	ibmc_mcast	9.0" "ar	64	1024	smpi:rdb	19.5" >"$TMP/ar.tsv"
python3 tuning.py "$TMP/win.tsv" "$TMP/generic.json" "$TMP/all.json" --barrier "$TMP/bar.tsv" \
    --allreduce "$TMP/ar.tsv" 2>/dev/null || { echo "FAIL: tuning.py failed with --barrier and --allreduce"; exit 1; }
python3 tuning.py --extend "$TMP/all.json" "$TMP/again.json" --barrier "$TMP/bar.tsv" \
    --allreduce "$TMP/ar.tsv" 2>/dev/null || { echo "FAIL: tuning.py --extend failed"; exit 1; }
python3 - "$TMP/all.json" "$TMP/again.json" "$TMP/generic.json" <<'PY' || exit 1
import json, sys
out, again, gen = (json.load(open(p)) for p in sys.argv[1:])
if out != again:
    sys.exit("FAIL: --extend on its own output changed it (a rule stacked on a rule)")
bar = gen["collective=barrier"]["comm_type=intra"]
want = {"comm_hierarchy=parent": bar["comm_hierarchy=parent"],
        "comm_hierarchy=any": {"comm_size<64": bar["comm_hierarchy=any"],
                               "comm_size=any": {"algorithm=MPIR_Barrier_intra_ibmc_mcast": {}}}}
if out["collective=barrier"]["comm_type=intra"] != want:
    sys.exit("FAIL: barrier intra subtree: %s" % json.dumps(out["collective=barrier"]["comm_type=intra"]))
ar = gen["collective=allreduce"]["comm_type=intra"]
want = {"comm_size<64": ar,
        "comm_size=any": {"avg_msg_size<=8": {
            "is_commutative=yes": {"algorithm=MPIR_Allreduce_intra_ibmc_mcast": {}},
            "is_commutative=no": ar}, "avg_msg_size=any": ar}}
if out["collective=allreduce"]["comm_type=intra"] != want:
    sys.exit("FAIL: allreduce intra subtree: %s" % json.dumps(out["collective=allreduce"]["comm_type=intra"]))
PY
sed 's/\tsmpi:ompi_bruck\t[0-9.]*$/\tsmpi:ompi_bruck\t0.5/' "$TMP/bar.tsv" >"$TMP/bar-lose.tsv"
python3 tuning.py --extend "$TMP/all.json" "$TMP/undone.json" --barrier "$TMP/bar-lose.tsv" \
    2>/dev/null || { echo "FAIL: tuning.py --extend failed on a losing barrier"; exit 1; }
python3 - "$TMP/undone.json" "$TMP/generic.json" <<'PY' || { echo "FAIL: a barrier that no longer wins kept its rule"; exit 1; }
import json, sys
out, gen = (json.load(open(p)) for p in sys.argv[1:])
sys.exit(out["collective=barrier"] != gen["collective=barrier"])
PY
sed 's/\tsmpi:binomial_tree\t[0-9.]*$/\tsmpi:binomial_tree\t0.5/' "$TMP/win.tsv" >"$TMP/lose.tsv"
if python3 tuning.py "$TMP/lose.tsv" "$TMP/generic.json" "$TMP/none.json" 2>/dev/null ||
    [ -e "$TMP/none.json" ]; then
    echo "FAIL: tuning.py wrote a file where ibmc_mcast never wins"; exit 1
fi
generic=../../mpich/maint/tuning/coll/mpir/generic.json
csel=../../mpich/src/mpi/coll/src/csel.c
committed=../../maint/tuning/coll/ibmc/ibmc-sim-tuning.json
if [ ! -f "$generic" ] || [ ! -f "$csel" ]; then
    # shellcheck source=../../maint/mpich-source.sh
    tarball=$(. ../../maint/mpich-source.sh && ibmc_mpich_tarball) ||
        { echo "FAIL: no MPICH source to compare the selection file with"; exit 1; }
    tar -xJOf "$tarball" --wildcards '*/maint/tuning/coll/mpir/generic.json' >"$TMP/mpich-generic.json" ||
        { echo "FAIL: $tarball has no maint/tuning/coll/mpir/generic.json"; exit 1; }
    tar -xJOf "$tarball" --wildcards '*/src/mpi/coll/src/csel.c' >"$TMP/csel.c" ||
        { echo "FAIL: $tarball has no src/mpi/coll/src/csel.c"; exit 1; }
    generic=$TMP/mpich-generic.json
    csel=$TMP/csel.c
fi
python3 - "$committed" "$generic" "$csel" <<'PY' || exit 1
import json, re, sys
out, gen = (json.load(open(p)) for p in sys.argv[1:3])
# the collectives MPICH can size by avg_msg_size: the cases of get_avg_msgsize
src = open(sys.argv[3]).read()
body = src[src.index("get_avg_msgsize(MPIR_Csel_coll_sig_s"):]
body = body[:body.index("\n}\n")]
avg_ok = {c.lower() for c in re.findall(r"case MPIR_CSEL_COLL_TYPE__(\w+):", body)}
if "bcast" not in avg_ok:
    sys.exit("FAIL: could not read get_avg_msgsize's collectives from %s" % sys.argv[3])
def keys(t):
    for k, v in t.items():
        yield k
        if isinstance(v, dict):
            yield from keys(v)
for coll, tree in out.items():
    name = coll.split("=", 1)[1]
    if name not in avg_ok and any(k.startswith("avg_msg_size") for k in keys(tree)):
        sys.exit("FAIL: %s sizes %s by avg_msg_size, which MPICH's csel.c does not define for it"
                 % (sys.argv[1], name))
intra = out["collective=bcast"].pop("comm_type=intra")
gen["collective=bcast"].pop("comm_type=intra")
out["collective=allgather"].pop("comm_type=intra")
gen["collective=allgather"].pop("comm_type=intra")
# the barrier's and allreduce's subtrees: MPICH's, or ibmc_mcast's rule
# keeping MPICH's below its node count
def stock_of(t, alg):
    k = list(t)
    if len(k) == 2 and k[0].startswith("comm_size<") and "algorithm=" + alg in json.dumps(t[k[1]]):
        return t[k[0]]
    return t
for coll, path, alg in (("collective=barrier", ("comm_type=intra", "comm_hierarchy=any"),
                         "MPIR_Barrier_intra_ibmc_mcast"),
                        ("collective=allreduce", ("comm_type=intra",), "MPIR_Allreduce_intra_ibmc_mcast")):
    o, g = out[coll], gen[coll]
    for k in path[:-1]:
        o, g = o[k], g[k]
    if stock_of(o[path[-1]], alg) != g[path[-1]]:
        sys.exit("FAIL: %s: %s is neither MPICH's nor ibmc_mcast's rule over it" % (sys.argv[1], coll))
    o.pop(path[-1])
    g.pop(path[-1])
if out != gen:
    sys.exit("FAIL: %s differs from MPICH's default beyond the bcast and allgather intra subtrees "
             "and the barrier's and allreduce's rules" % sys.argv[1])
if "algorithm=MPIR_Bcast_intra_ibmc_mcast" not in json.dumps(intra):
    sys.exit("FAIL: %s does not pick ibmc_mcast" % sys.argv[1])
PY
echo "ok: tuning.py picks ibmc_mcast (broadcast, barrier, allreduce) and ibmc_node_rd where" \
    "they win and nothing else; the committed file is MPICH's default plus that"
