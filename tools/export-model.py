#!/usr/bin/env python3
"""Write a dgq model file (docs/model-format.md, format "dgq-model" v1) from a GGUF file.

The code is dgqtools.export_model; --help gives the usage.
"""

import sys

from dgqtools.export_model import main

if __name__ == "__main__":
    sys.exit(main())
