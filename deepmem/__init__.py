"""deepmem: persistent memory and small contexts for OpenCode sessions, without LLM calls."""

__version__ = "0.1.0"
