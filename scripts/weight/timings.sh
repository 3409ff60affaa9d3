#!/usr/bin/env bash
# timings.sh ROUNDS VENV...: per round, per venv in turn (alternating): the first search
# PAPERS: a JSON-lines file of 1,000 dev abstracts (the first 1,000 of papers.jsonl.gz with one).
# from a cold process with an empty cache and no default index (it builds the index), a
# second search (index there), and a 1,000-abstract build with --backend auto and
# --no-cache (the model export, where auto makes one, already in that round's cache).
set -u; : "${PAPERS:?set PAPERS}"
ROUNDS=$1; shift
t() { local s e; s=$(date +%s.%N); "$@" > ${WORK:-/tmp/weight}/last.out 2> ${WORK:-/tmp/weight}/last.err; rc=$?; e=$(date +%s.%N); echo "$(echo "$e - $s" | bc) rc=$rc"; }
for r in $(seq 1 "$ROUNDS"); do
  for name in "$@"; do
    D=${WORK:-/tmp/weight}/$name; C=${WORK:-/tmp/weight}/cache-$name-$r
    rm -rf "$C" "$D/indexes/iclr2025" ${WORK:-/tmp/weight}/idx-$name; mkdir -p "$D/indexes"
    cd "$D"; . .venv/bin/activate
    export EMBEDSEARCH_CACHE_DIR=$C
    l=$(cut -d' ' -f1 /proc/loadavg)
    first=$(t embedsearch search "low-rank visual prompting"); b1=$(grep -o "backend [a-z0-9-]*" ${WORK:-/tmp/weight}/last.err | head -1)
    second=$(t embedsearch search "low-rank visual prompting")
    build=$(t embedsearch build "$PAPERS" --out "${WORK:-/tmp/weight}"/idx-$name --backend auto --no-cache)
    b2=$(grep -o "backend [a-z0-9-]*)" ${WORK:-/tmp/weight}/last.err | tail -1)
    echo "round $r $name load1=$l first_search=$first [$b1] second_search=$second build_1k=$build [$b2]"
    deactivate
  done
done
