#!/usr/bin/env bash
# install.sh NAME COMMIT EXTRAS: fresh clone of branch weight at COMMIT into "${WORK:-/tmp/weight}"/NAME,
# then the README's install line (with EXTRAS), timed; then venv size and the resolved set.
set -euo pipefail
NAME=$1; COMMIT=$2; EXTRAS=$3; SED=${4:-}
D="${WORK:-/tmp/weight}"/$NAME
rm -rf "$D"; git clone -q "${REPO:-.}" "$D"; cd "$D"; git checkout -q "$COMMIT"
[ -z "$SED" ] || { sed -i "$SED" pyproject.toml; echo "pyproject edited: $(git diff --stat | tail -1)"; git diff | grep "^[-+] "; }
echo "== $NAME at $(git log --oneline -1) extras=$EXTRAS; load: $(cut -d' ' -f1-3 /proc/loadavg)"
s=$(date +%s.%N)
python3 -m venv .venv && . .venv/bin/activate && pip install -q -e ".$EXTRAS" > pip.log 2>&1
e=$(date +%s.%N)
echo "install_s $(echo "$e - $s" | bc) ; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "venv_size $(du -sh .venv | cut -f1) ($(du -sb .venv | cut -f1) bytes)"
pip list --format=freeze > freeze.txt; echo "packages $(wc -l < freeze.txt)"
grep -i -E "^(torch|nvidia|openvino|onnx|nncf)" freeze.txt | tr '\n' ' '; echo
