#!/usr/bin/env bash
# check-doc-table.sh DGQ DOC: the text of DOC between "<!-- BEGIN dgq schemes --markdown -->" and
# "<!-- END dgq schemes --markdown -->" must equal `DGQ schemes --markdown` (ctest
# docs:scheme-table). With --write, replaces that text instead (after adding a family).
set -euo pipefail
write=0
if [[ "${1:-}" == "--write" ]]; then write=1; shift; fi
dgq=$1 doc=$2
begin='<!-- BEGIN dgq schemes --markdown -->' end='<!-- END dgq schemes --markdown -->'
generated=$("$dgq" schemes --markdown)
if (( write )); then
  python3 - "$doc" "$begin" "$end" "$generated" <<'PY'
import sys
doc, begin, end, table = sys.argv[1:]
s = open(doc).read()
i, j = s.index(begin) + len(begin), s.index(end)
open(doc, "w").write(s[:i] + "\n" + table + "\n" + s[j:])
PY
  exit 0
fi
documented=$(sed -n "/^${begin}\$/,/^${end}\$/p" "$doc" | sed '1d;$d')
if [[ "$documented" != "$generated" ]]; then
  echo "$doc: the scheme table differs from \`dgq schemes --markdown\`; run tools/check-doc-table.sh --write $dgq $doc" >&2
  diff <(echo "$documented") <(echo "$generated") >&2 || true
  exit 1
fi
echo "$doc: scheme table matches the registry"
