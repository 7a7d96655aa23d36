#!/usr/bin/env bash
# On the GPU machine: the dgq CLI's --device cuda against --device cpu on the shipped traces,
# output files compared byte for byte (tools/h5-same.py): `dgq compress` (the stored codes,
# ranges and markers) and `dgq replay` (every metric; the runs' `device` attribute aside) for
# DGQ v1's marker modes and granularities.
#
#   tools/gpu-cli-check.sh OUTDIR        (env DGQ_CLI_CHECK_DEVICE=cuda: the device compared with
#                                         cpu; `reference` checks this script where no GPU is)
#
# Needs .gpubundle/dgq-bundle.tar.xz (tools/gpu-bundle.sh, made where Debian's packages are:
# the device machine has no HDF5) and python3 with h5py and numpy. Writes OUTDIR/cli-check.md
# (one line per comparison, then a summary) and exits 0 only if every comparison is equal.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-out/gpu-cli-check}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
report="$out/cli-check.md"
bundle=.gpubundle/dgq-bundle.tar.xz
[ -f "$bundle" ] || { echo "gpu-cli-check: $bundle is missing: run tools/gpu-bundle.sh where dgq is built" | tee "$report"; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar -xJf "$bundle" -C "$work"
dgq() { LD_LIBRARY_PATH="$work/dgq-bundle/lib" "$work/dgq-bundle/dgq" "$@"; }
other="${DGQ_CLI_CHECK_DEVICE:-cuda}"

compared=0; equal=0
{ echo "# dgq CLI: --device $other against --device cpu"; echo; } > "$report"
record() {  # name, exit status of the comparison, its last line
  compared=$((compared + 1))
  if [ "$2" -eq 0 ]; then equal=$((equal + 1)); echo "- equal: $1 ($3)" >> "$report"
  else echo "- DIFFERENT: $1 ($3)" >> "$report"; fi
}
for trace in data/*.h5; do
  for spec in dgq "dgq:granularity=segment-channel,markers=inband" "dgq:markers=bitmap,group_ratio=0.5,max_groups=8"; do
    name="$(basename "$trace") $spec"
    for device in cpu "$other"; do
      rm -f "$work/$device.h5" "$work/replay-$device.h5"
      dgq compress "$trace" -o "$work/$device.h5" --scheme "$spec" --device "$device" > "$work/compress-$device.log" 2>&1 ||
        echo "compress --device $device failed: $(tail -1 "$work/compress-$device.log")" >> "$report"
      dgq replay "$trace" -o "$work/replay-$device.h5" --scheme "$spec" --device "$device" > "$work/replay-$device.log" 2>&1 ||
        echo "replay --device $device failed: $(tail -1 "$work/replay-$device.log")" >> "$report"
    done
    last="$(python3 tools/h5-same.py "$work/cpu.h5" "$work/$other.h5" 2>&1)"; rc=$?
    record "compress $name" $rc "$(echo "$last" | tail -1)"
    last="$(python3 tools/h5-same.py --ignore-attr device "$work/replay-cpu.h5" "$work/replay-$other.h5" 2>&1)"; rc=$?
    record "replay $name" $rc "$(echo "$last" | tail -1)"
  done
done
summary="$equal of $compared comparisons equal"
{ echo; echo "gpu-cli-check: $summary"; } >> "$report"
echo "gpu-cli-check: $summary"
[ "$equal" -eq "$compared" ] && [ "$compared" -gt 0 ]
