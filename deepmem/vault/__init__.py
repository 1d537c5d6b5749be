"""The vault: every write to disk, originals by key (sealed), restoring them, and redaction of shared text."""
