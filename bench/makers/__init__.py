"""What regenerates the test fixtures from corpora and the real OpenCode."""
