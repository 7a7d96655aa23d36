#!/usr/bin/env python3
"""Per-layer sensitivity of a model's KV cache, and the layer plans it buys (docs/eval.md, "Layer (dgqtools.layer_sensitivity; --help for its usage)."""

import sys

from dgqtools.layer_sensitivity import main

if __name__ == "__main__":
    sys.exit(main())
