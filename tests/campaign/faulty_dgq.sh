#!/usr/bin/env bash
# A dgq that fails on purpose, to show that tools/mutation-campaign.py reports every kind of
# failure (ctest campaign:detects-planted-faults). Each command misbehaves in its own way:
#   inspect     dies by SIGSEGV                      -> crash
#   compress    never ends                           -> hang
#   replay      prints two "dgq: error:" lines       -> badmsg
#   sweep       leaves its output, then fails        -> partial
#   decompress  reports std::bad_alloc               -> oom
case "$1" in
  inspect) kill -SEGV $$ ;;
  compress) exec sleep 1000 ;;
  replay) echo "dgq: error: first line" >&2; echo "dgq: error: second line" >&2; exit 2 ;;
  sweep)
    while [ $# -gt 0 ]; do [ "$1" = -o ] && { echo "looks complete" >"$2"; break; }; shift; done
    echo "dgq: error: failed after writing its output" >&2; exit 2 ;;
  decompress) echo "dgq: error: std::bad_alloc" >&2; exit 2 ;;
esac
echo "dgq: error: faulty_dgq.sh: unexpected command $1" >&2
exit 2
