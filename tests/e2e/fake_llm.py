"""A scripted OpenAI-compatible model on 127.0.0.1 that records every request it receives.

A script is a list of steps, played one per agent request:

- ``{"tool": name, "args": {...}, "say"?: text, "ptok"?: n}``: one tool call;
- ``{"calls": [{"tool", "args"}, ...], "say"?: text, "ptok"?: n}``: parallel tool calls;
- ``{"text": text, "ptok"?: n}``: a final answer (ends the turn).

The step to play is found from the request itself: one past the newest step whose issued
tool calls have results in the request, or whose final answer is in it (so the texts of a
script's final answers must differ from each other). So a plugin that removes or rewrites old messages
does not confuse the script, and a second ``opencode run --continue`` turn resumes after
the first turn's steps. When the script is exhausted the model answers ``"Done."``.

A ``task`` step may carry ``"steps"``: the script of the subagent it starts. The subagent's
requests are recognised by their first user message, which holds the task's ``prompt``.

``ptok`` is the ``prompt_tokens`` usage reported for that step (default: the request's
message characters / ``chars_per_token``, 4 unless set); a large value makes OpenCode's own
compaction fire.
Requests without tools are auxiliary: title generation gets a title, the compaction
summary request gets ``summary``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAIN = "main"
TITLE = "Scripted session"
DEFAULT_SUMMARY = "Summary: the user asked for work on the project; the steps so far are done."


@dataclass
class Request:
    """One request the fake model received: its kind, the script and step it answered, the body."""

    kind: str  # "agent" | "title" | "compaction"
    script: str  # MAIN or the task prompt of a subagent script ("" for auxiliary requests)
    step: int  # index of the step played (len(script) when the script was exhausted)
    body: dict[str, Any]  # in OpenAI's chat format (translated when the model speaks another)
    raw: dict[str, Any] | None = None  # the body as received, when it was translated

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The OpenAI-format messages of the request."""
        return self.body.get("messages", [])

    def tool_results(self) -> dict[str, str]:
        """Tool results in the request by tool_call_id, as text."""
        return {m.get("tool_call_id", ""): message_text(m) for m in self.messages if m.get("role") == "tool"}

    def system_text(self) -> str:
        """The system messages' text: where the frozen memory and resume block go."""
        return _system_text(self.body)

    def text(self) -> str:
        """Every message's text joined: what a test greps for content that reached the model."""
        return "\n".join(message_text(m) for m in self.messages)


def message_text(message: dict[str, Any]) -> str:
    """The text of an OpenAI-format message whose content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def step_calls(step: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool calls of a script step (empty for a text step)."""
    if "calls" in step:
        return step["calls"]
    return [step] if "tool" in step else []


def subagent_scripts(script: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Map each task prompt to its subagent script, nested subagents included."""
    found: dict[str, list[dict[str, Any]]] = {}
    for step in script:
        for call in step_calls(step):
            if "steps" in call:
                found[call["args"]["prompt"]] = call["steps"]
                found.update(subagent_scripts(call["steps"]))
    return found


@dataclass
class FakeLLM:
    """The scripted model server. Use as a context manager, or call start() and stop()."""

    script: list[dict[str, Any]]
    summary: str = DEFAULT_SUMMARY
    requests: list[Request] = field(default_factory=list)
    chars_per_token: float = 4
    """Characters of a request's messages per prompt token reported (a smaller number: a tokenizer counting more)."""

    def __post_init__(self) -> None:
        self._scripts = {MAIN: self.script, **subagent_scripts(self.script)}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def prompt_tokens(self, request: Request) -> int:
        """The prompt tokens reported for a request: its messages' characters over `chars_per_token`."""
        return int(len(json.dumps(request.messages)) // self.chars_per_token)

    def add_session_script(self, prompt: str, steps: list[dict[str, Any]]) -> None:
        """Play `steps` for a session whose first user message holds `prompt` (a later, new session)."""
        with self._lock:
            self._scripts[prompt] = steps

    def start(self) -> FakeLLM:
        """Listen on a free port of 127.0.0.1 in a daemon thread."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL to put in opencode.json."""
        assert self._server is not None, "FakeLLM is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def agent_requests(self, script: str = MAIN) -> list[Request]:
        """The agent requests answered from one script (the main one by default), in order."""
        with self._lock:
            return [r for r in self.requests if r.kind == "agent" and r.script == script]

    def steps_played(self, script: str = MAIN) -> int:
        """How many distinct steps of a script were answered (the final answer included)."""
        return len({r.step for r in self.agent_requests(script) if r.step < len(self._scripts[script])})

    def call_id(self, script: str, step: int, index: int = 0) -> str:
        """The tool_call_id the model issues for a step's index-th call."""
        prefix = "main" if script == MAIN else f"sub{list(self._scripts).index(script)}"
        return f"call_{prefix}_{step:03d}_{index}"

    def answer(self, body: dict[str, Any]) -> tuple[Request, dict[str, Any]]:
        """Record a request and choose the step to answer it with."""
        if not body.get("tools"):
            kind = "title" if "title generator" in _system_text(body) else "compaction"
            step = {"text": TITLE if kind == "title" else self.summary}
            request = Request(kind, "", 0, body)
        else:
            script = self._script_of(body)
            index = self._next_step(script, body)
            steps = self._scripts[script]
            step = steps[index] if index < len(steps) else {"text": "Done."}
            request = Request("agent", script, index, body)
        with self._lock:
            self.requests.append(request)
        return request, step

    def stream(self, request: Request, step: dict[str, Any]) -> Iterator[bytes]:
        """The server-sent events answering one request: chat.completion chunks, then [DONE]."""
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake"}
        for chunk in _chunks(self, request, step):
            yield b"data: " + json.dumps({**base, **chunk}).encode() + b"\n\n"
        yield b"data: [DONE]\n\n"

    def _script_of(self, body: dict[str, Any]) -> str:
        first_user = next((message_text(m) for m in body.get("messages", []) if m.get("role") == "user"), "")
        for prompt in self._scripts:
            if prompt != MAIN and prompt in first_user:
                return prompt
        return MAIN

    def _next_step(self, script: str, body: dict[str, Any]) -> int:
        messages = body.get("messages", [])
        answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
        said = {message_text(m) for m in messages if m.get("role") == "assistant"}
        done = -1
        for index, step in enumerate(self._scripts[script]):
            ids = {self.call_id(script, index, k) for k in range(len(step_calls(step)))}
            if ids & answered or step.get("text") in said:
                done = index
        return done + 1


class TranslatedLLM(FakeLLM):
    """A scripted model behind another provider's API: a body is chosen for in chat-completions shape
    (`chat_view`) and kept as received (`Request.raw`)."""

    @staticmethod
    def chat_view(body: dict[str, Any]) -> dict[str, Any]:
        """The body in chat-completions shape: as it is here; each provider's stand-in translates its own."""
        return body

    def answer(self, body: dict[str, Any]) -> tuple[Request, dict[str, Any]]:
        """Choose the step from the translated body; keep the body as received."""
        request, step = super().answer(self.chat_view(body))
        request.raw = body
        return request, step


def sse_event(kind: str, data: dict[str, Any]) -> bytes:
    """One named server-sent event whose data carries its `type` (Anthropic's and OpenAI's Responses streams)."""
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()


def _system_text(body: dict[str, Any]) -> str:
    return " ".join(message_text(m) for m in body.get("messages", []) if m.get("role") == "system")


def _chunks(llm: FakeLLM, request: Request, step: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The streamed chat.completion chunks answering one step, usage on the last one."""
    prompt_tokens = step.get("ptok", llm.prompt_tokens(request))
    calls = step_calls(step)
    text = step.get("say", "") if calls else step["text"]
    yield {"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]}
    for k, call in enumerate(calls):
        function = {"name": call["tool"], "arguments": json.dumps(call["args"])}
        tool_call = {"index": k, "id": llm.call_id(request.script, request.step, k), "type": "function", "function": function}
        yield {"choices": [{"index": 0, "delta": {"tool_calls": [tool_call]}, "finish_reason": None}]}
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 20, "total_tokens": prompt_tokens + 20}
    finish = "tool_calls" if calls else "stop"
    yield {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage}


def _handler_for(llm: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            request, step = llm.answer(body)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            for event in llm.stream(request, step):
                self.wfile.write(event)
            self.wfile.flush()
            self.close_connection = True

    return Handler
