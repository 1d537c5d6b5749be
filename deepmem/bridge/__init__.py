"""The long-running engine: newline-delimited JSON on stdio, for the OpenCode plugin."""
