"""A stand-in for OpenAI's Responses API (`POST /v1/responses`, streamed) that plays a FakeLLM script.

`@ai-sdk/openai` sends GPT models' requests here. Each request body is kept as received
(`Request.raw`, where `prompt_cache_key` shows) and translated to OpenAI's chat format
(`Request.body`), so the script's steps are chosen as FakeLLM chooses them. The answer
streams as the Responses API does: response.created, a message item with its text deltas,
one function_call item per call with its argument deltas, response.completed with usage.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.e2e.fake_llm import Request, TranslatedLLM, sse_event, step_calls

MODEL = "gpt-5"
"""A model id OpenCode 1.18.33 offers `apply_patch` to (in place of `edit` and `write`)."""


def item_text(content: Any) -> str:
    """The text of a Responses content value: a string or a list of input/output text parts."""
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def chat_view(body: dict[str, Any]) -> dict[str, Any]:
    """A Responses API body in OpenAI's chat format: instructions, messages, function calls and outputs."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": body["instructions"]}] if body.get("instructions") else []
    for item in body.get("input", []):
        kind = item.get("type", "message")
        if kind == "function_call":
            call = {"id": item["call_id"], "type": "function", "function": {"name": item["name"], "arguments": item["arguments"]}}
            messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item["call_id"], "content": item_text(item.get("output"))})
        elif kind == "message":
            role = "system" if item.get("role") == "developer" else item.get("role")
            messages.append({"role": role, "content": item_text(item.get("content"))})
    return {"messages": messages, "tools": body.get("tools") or []}


class ResponsesLLM(TranslatedLLM):
    """The scripted model behind OpenAI's Responses API; `base_url` goes in `provider.openai.options.baseURL`."""

    chat_view = staticmethod(chat_view)

    def stream(self, request: Request, step: dict[str, Any]) -> Iterator[bytes]:
        """The Responses API events answering one step."""
        calls = step_calls(step)
        text = step.get("say", "") if calls else step["text"]
        yield sse_event("response.created", {"response": {"id": "resp_fake", "created_at": 0, "model": MODEL}})
        index = 0
        if text:
            item = {"type": "message", "id": "msg_fake", "role": "assistant", "content": []}
            yield sse_event("response.output_item.added", {"output_index": index, "item": item})
            yield sse_event("response.output_text.delta", {"item_id": "msg_fake", "output_index": index, "content_index": 0, "delta": text})
            yield sse_event("response.output_item.done", {"output_index": index, "item": item})
            index += 1
        for number, call in enumerate(calls):
            call_id = self.call_id(request.script, request.step, number)
            item = {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": call["tool"], "arguments": ""}
            arguments = json.dumps(call["args"])
            yield sse_event("response.output_item.added", {"output_index": index, "item": item})
            yield sse_event("response.function_call_arguments.delta", {"item_id": item["id"], "output_index": index, "delta": arguments})
            yield sse_event("response.output_item.done", {"output_index": index, "item": {**item, "arguments": arguments, "status": "completed"}})
            index += 1
        tokens = step.get("ptok", len(json.dumps(request.raw)) // 4)
        usage = {"input_tokens": tokens, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20,
                 "output_tokens_details": {"reasoning_tokens": 0}}
        yield sse_event("response.completed", {"response": {"id": "resp_fake", "status": "completed", "usage": usage}})
