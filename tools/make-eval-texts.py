#!/usr/bin/env python3
"""Token files for `dgq eval` (format "dgq-tokens" v1, docs/eval.md).

The code is dgqtools.make_eval_texts; --help gives the usage.
"""

import sys

from dgqtools.make_eval_texts import main

if __name__ == "__main__":
    sys.exit(main())
