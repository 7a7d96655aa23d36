#!/usr/bin/env bash
# The two spellings of a scheme list, --scheme SPEC repeated (canonical) and --schemes LIST
# (deprecated, accepted for one release), give byte-identical results in one command.
#   scheme_spelling_case.sh replay|eval|memory DGQ FIXTURES SOURCE_DIR
# Each run happens in its own folder with the same relative output names, so stdout and the
# output files can be compared as bytes (eval's throughput line aside: it is a timing).
set -eu
command=$1 dgq=$2 fix=$3 src=$4
# A spec with its own commas: the case that needs the list splitting rule of --schemes.
spec_with_commas="dgq2:kbits=4,vbits=4"
work="$fix/scheme-spelling-$command"
rm -rf "$work"
mkdir -p "$work/repeated" "$work/list"

fail() { echo "FAIL ($command): $*" >&2; exit 1; }
run() {  # run FOLDER ARGS...: dgq ARGS in FOLDER, stdout to FOLDER/stdout
  local folder=$1
  shift
  (cd "$work/$folder" && "$dgq" "$@" >stdout 2>stderr) || { cat "$work/$folder/stderr" >&2; fail "dgq $*"; }
}
case "$command" in
  replay)
    run repeated replay "$fix/good.h5" --scheme q8_0 --scheme "$spec_with_commas" -o out.h5 --json out.json
    run list replay "$fix/good.h5" --schemes "q8_0,$spec_with_commas" -o out.h5 --json out.json
    outputs="stdout out.h5 out.json"
    whole="^$spec_with_commas @ good " row="^(q8_0|$spec_with_commas) @ good " rows=2 ;;
  eval)
    model="$src/tests/fuzz/corpus/fuzz_model/seed-llama.h5" text="$src/tests/fuzz/corpus/fuzz_tokens/seed-tokens-int32.h5"
    run repeated eval --model "$model" --text "$text" --ctx 8 --scheme q8_0 --scheme "$spec_with_commas" -o out.h5
    run list eval --model "$model" --text "$text" --ctx 8 --schemes "q8_0,$spec_with_commas" -o out.h5
    for folder in repeated list; do grep -v '^forward pass: ' "$work/$folder/stdout" >"$work/$folder/table"; done
    outputs="table out.h5"
    # The base (fp16) and the two schemes.
    whole="^$spec_with_commas " row="^(fp16|q8_0|$spec_with_commas) " rows=3 ;;
  memory)
    run repeated memory --model llama-3-8b --tokens 8192 --scheme q8_0 --scheme "$spec_with_commas"
    run list memory --model llama-3-8b --tokens 8192 --schemes "q8_0,$spec_with_commas"
    outputs="stdout"
    # memory's table names a scheme as asked: the spec with its commas, whole.
    whole="^8192 +dgq2:kbits=4,vbits=4 " row="^8192 " rows=2 ;;
  *) echo "scheme_spelling_case.sh: unknown command $command" >&2; exit 2 ;;
esac
for output in $outputs; do
  cmp "$work/repeated/$output" "$work/list/$output" || fail "$output differs between --scheme and --schemes"
done
# Both spellings must have run every scheme, the spec with commas whole (not split in two).
grep -q -E -- "$whole" "$work/repeated/stdout" || fail "no row for $spec_with_commas"
found=$(grep -c -E -- "$row" "$work/repeated/stdout" || true)
[ "$found" -eq "$rows" ] || fail "expected $rows scheme rows, found $found"
echo "$command: --scheme and --schemes agree"
