"""Compaction checkpoints, resume blocks and consolidation."""
