#!/usr/bin/env bash
# --device reference (every family's literal reference, docs/spec.md's rules written out) and the
# default --device cpu (the fast CPU paths where a family has them) give byte-identical replay
# results, stdout and JSON, for families with a fast path (q8_0, iq4_nl, kivi-4, turboquant,
# dgq, dgq2) and one without (q5_0). The conformance suite compares the schemes themselves
# (tests/reference/test_scheme_cpu_conformance.cpp); this shows the CLI reaches both.
#   device_reference_case.sh DGQ FIXTURES
set -eu
dgq=$1 fix=$2
work="$fix/device-reference"
rm -rf "$work" && mkdir -p "$work/cpu" "$work/reference"
schemes=(--scheme q8_0 --scheme iq4_nl --scheme kivi-4 --scheme turboquant:bits=3 --scheme dgq:granularity=segment-channel
         --scheme dgq2 --scheme q5_0)
for device in cpu reference; do
  (cd "$work/$device" && "$dgq" replay "$fix/good.h5" "${schemes[@]}" --device "$device" -o out.h5 --json out.json \
    >stdout 2>/dev/null) || { echo "FAIL: dgq replay --device $device" >&2; exit 1; }
done
# Every byte agrees but the runs' `device` attribute, which records the device each was asked for.
without_device_attribute() {  # h5dump of DIR/out.h5 (named out.h5 in the dump) without the attribute "device"
  (cd "$1" && h5dump out.h5) | awk '/ATTRIBUTE "device" \{/ {skip = 1; depth = 0} skip {depth += gsub(/\{/, "{") - gsub(/\}/, "}"); if (depth == 0) skip = 0; next} {print}'
}
for device in cpu reference; do
  [ "$(h5dump -a /runs/q8_0@good/device "$work/$device/out.h5" | grep -c "\"$device\"")" = 1 ] ||
    { echo "FAIL: the runs of --device $device do not record device $device" >&2; exit 1; }
  [ "$(jq -r '[.runs[].device] | unique | join(",")' "$work/$device/out.json")" = "$device" ] ||
    { echo "FAIL: the JSON of --device $device does not record device $device" >&2; exit 1; }
done
cmp <(without_device_attribute "$work/cpu") <(without_device_attribute "$work/reference") ||
  { echo "FAIL: out.h5 differs between --device cpu and reference" >&2; exit 1; }
[ "$(without_device_attribute "$work/cpu" | grep -c 'ATTRIBUTE "scheme"')" -ge 7 ] ||
  { echo "FAIL: the dump of out.h5 lost its runs" >&2; exit 1; }
cmp <(jq 'del(.runs[].device)' "$work/cpu/out.json") <(jq 'del(.runs[].device)' "$work/reference/out.json") ||
  { echo "FAIL: out.json differs between --device cpu and reference" >&2; exit 1; }
# stdout ends with a throughput line (a timing); the table above it must agree.
diff <(grep -v 'tokens\*heads/s' "$work/cpu/stdout") <(grep -v 'tokens\*heads/s' "$work/reference/stdout") ||
  { echo "FAIL: stdout differs between --device cpu and reference" >&2; exit 1; }
[ "$(grep -c ' @ good ' "$work/cpu/stdout")" -ge 7 ] || { echo "FAIL: expected a row per scheme in stdout" >&2; exit 1; }
echo "--device cpu and --device reference agree"
