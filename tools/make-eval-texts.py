#!/usr/bin/env python3
"""Token files for `dgq eval` (format "dgq-tokens" v1, docs/eval.md). (dgqtools.make_eval_texts; --help for its usage)."""

import sys

from dgqtools.make_eval_texts import main

if __name__ == "__main__":
    sys.exit(main())
