"""The test suite: unit, property, golden and fidelity tests, the plugin under Node
(`plugin/`), and end-to-end runs of the real OpenCode binary (`e2e/`)."""
