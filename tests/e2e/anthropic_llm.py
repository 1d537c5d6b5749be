"""A stand-in for Anthropic's Messages API (`POST /v1/messages`, streamed) that plays a FakeLLM script.

Each request body is kept as received (`Request.raw`, where `cache_control` marks show) and
translated to OpenAI's chat format (`Request.body`), so the script's steps are chosen as
FakeLLM chooses them. The answer streams as Anthropic does: message_start, a text block
and one tool_use block per call (content_block_start, deltas, content_block_stop),
message_delta with the stop reason and usage, message_stop.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.e2e.fake_llm import Request, TranslatedLLM, sse_event, step_calls

MODEL = "claude-sonnet-4-5"


def block_text(content: Any) -> str:
    """The text of an Anthropic content value: a string or a list of blocks."""
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content or [] if isinstance(block, dict))


def openai_view(body: dict[str, Any]) -> dict[str, Any]:
    """A Messages API body in OpenAI's chat format: system blocks, user text, tool results, assistant turns."""
    system = body.get("system") or []
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": block.get("text", "")} for block in ([{"text": system}] if isinstance(system, str) else system)
    ]
    for message in body.get("messages", []):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        if message.get("role") == "assistant":
            calls = [
                {"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": json.dumps(b.get("input"))}}
                for b in blocks if b.get("type") == "tool_use"
            ]
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            messages.append({"role": "assistant", "content": text, **({"tool_calls": calls} if calls else {})})
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                messages.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": block_text(block.get("content"))})
        texts = [{"type": "text", "text": b.get("text", "")} for b in blocks if b.get("type") == "text"]
        if texts:
            messages.append({"role": "user", "content": texts})
    return {"messages": messages, "tools": body.get("tools") or []}


class AnthropicLLM(TranslatedLLM):
    """The scripted model behind an Anthropic Messages API; `base_url` goes in `provider.*.options.baseURL`."""

    chat_view = staticmethod(openai_view)

    def stream(self, request: Request, step: dict[str, Any]) -> Iterator[bytes]:
        """The Messages API events answering one step."""
        calls = step_calls(step)
        text = step.get("say", "") if calls else step["text"]
        tokens = step.get("ptok", len(json.dumps(request.raw)) // 4)
        usage = {"input_tokens": tokens, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        message = {"id": "msg_fake", "type": "message", "role": "assistant", "model": MODEL, "content": [],
                   "stop_reason": None, "stop_sequence": None, "usage": usage}
        yield sse_event("message_start", {"message": message})
        index = 0
        if text:
            yield sse_event("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
            yield sse_event("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": text}})
            yield sse_event("content_block_stop", {"index": index})
            index += 1
        for number, call in enumerate(calls):
            block = {"type": "tool_use", "id": self.call_id(request.script, request.step, number), "name": call["tool"], "input": {}}
            yield sse_event("content_block_start", {"index": index, "content_block": block})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(call["args"])}
            yield sse_event("content_block_delta", {"index": index, "delta": delta})
            yield sse_event("content_block_stop", {"index": index})
            index += 1
        stop = "tool_use" if calls else "end_turn"
        yield sse_event("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 20}})
        yield sse_event("message_stop", {})


def cache_marks(body: dict[str, Any]) -> list[tuple[str, int, int]]:
    """Every `cache_control` breakpoint of a Messages API body, in the order Anthropic counts them:
    ("tools", i, 0), ("system", i, 0), then ("messages", message index, block index)."""
    found = [("tools", i, 0) for i, tool in enumerate(body.get("tools") or []) if "cache_control" in tool]
    system = body.get("system")
    if isinstance(system, list):
        found += [("system", i, 0) for i, block in enumerate(system) if "cache_control" in block]
    for i, message in enumerate(body.get("messages", [])):
        content = message.get("content")
        if isinstance(content, list):
            found += [("messages", i, j) for j, block in enumerate(content) if "cache_control" in block]
    return found
