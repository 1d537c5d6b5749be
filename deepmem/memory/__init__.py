"""Project and global memory: store, hybrid search, injection."""
