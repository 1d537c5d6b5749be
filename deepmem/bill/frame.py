"""The frame: what every request carries before its messages, in tokens.

The provider bills the whole request. Before the messages come the system prompt and the
tool definitions: OpenCode's own, a user's own (AGENTS.md, MCP tools: `[cost]
frame_tokens`) and deepmem's (`deepmem.transform.additions`: its tool schemas, and its memory and
resume blocks joined to the system prompt). All of it sits before OpenCode's system mark,
so it is written when the cache is cold and read at every other request;
`deepmem.bill.accounting.Meter` bills it that way.
"""

from __future__ import annotations

OPENCODE_FRAME_TOKENS = 7_018
"""OpenCode 1.18.33's system prompt (2,004) and the definitions of its 10 built-in tools
(5,014), in o200k tokens of a request it sent
(`shared/reference/opencode-1.18.33/provider-request.last.json`; `bench/frames.py` counts
them again from it)."""
