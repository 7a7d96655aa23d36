#!/usr/bin/env python3
"""Per-layer sensitivity of a model's KV cache, and the layer plans it buys (docs/eval.md, "Layer
plans").

The code is dgqtools.layer_sensitivity; --help gives the usage.
"""

from dgqtools.layer_sensitivity import main

if __name__ == "__main__":
    main()
