"""Where the real OpenCode marks a request for the cache: the shape `PriceModel.cached_at_marks` bills.

OpenCode marks requests only for Anthropic's models (an id naming `claude` or `anthropic`):
its system prompt and its last two messages. A provider that reads its cache only at marks
therefore finds none before a message changed long before the end, which is why deepmem
prices a jump there as the write of every message. The fake model records each request.
"""

from __future__ import annotations

import json

from deepmem.bill.prices import family_of

SCRIPT = [
    {"say": "Looking around.", "tool": "bash", "args": {"command": "echo one", "description": "one"}},
    {"tool": "bash", "args": {"command": "echo two", "description": "two"}},
    {"tool": "bash", "args": {"command": "echo three", "description": "three"}},
    {"text": "Done."},
]


def marked(message: dict) -> bool:
    """True when a provider message carries a cache mark (on itself or on a content part)."""
    return "cache_control" in json.dumps(message)


def marks_per_request(project) -> list[list[int]]:
    """Per agent request of the main script: the indexes of its marked messages."""
    return [
        [index for index, message in enumerate(request.body["messages"]) if marked(message)]
        for request in project.llm.agent_requests()
    ]


def test_an_anthropic_model_is_marked_at_its_system_prompt_and_last_two_messages(opencode_project):
    project = opencode_project(SCRIPT, model_id="claude-fake")
    assert project.run("run three commands").ok
    requests = [request.body["messages"] for request in project.llm.agent_requests()]
    assert len(requests) == len(SCRIPT)
    for messages, marks in zip(requests, marks_per_request(project), strict=True):
        systems = [index for index, message in enumerate(messages) if message["role"] == "system"]
        last_two = [index for index, message in enumerate(messages) if message["role"] != "system"][-2:]
        assert marks == sorted(systems[:2] + last_two)
    assert family_of("fake", "claude-fake").cached_at_marks


def test_another_model_is_not_marked(opencode_project):
    project = opencode_project(SCRIPT)
    assert project.run("run three commands").ok
    assert marks_per_request(project) == [[] for _ in SCRIPT]
    assert not family_of("fake", "fake").cached_at_marks
