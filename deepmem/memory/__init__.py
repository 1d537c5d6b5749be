"""Project and global memory: store, hybrid search, injection."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
"""One BLAS thread: a query's matrix-vector products are small, and on a busy machine a
multi-threaded BLAS waits milliseconds for its worker threads."""
