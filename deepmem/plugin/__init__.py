"""The OpenCode plugin (one ESM file) and its command files, shipped as package data."""
