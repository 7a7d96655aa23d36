"""dgqtools: the Python library of dgq's tools, notebooks and tests.

Pure Python (numpy, h5py, gguf, tokenizers; the compiled bindings `dgq` only where a function
asks them), so it imports before anything is built. The scripts beside it in tools/ are thin
entry points into it; tools/setup-python.sh makes it importable from the project's .venv.
"""
