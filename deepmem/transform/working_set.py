"""The working set: the tool outputs the agent is still working on, decided from the messages.

Folded message by message up to a boundary (like the facts it belongs to), so the set is
the same at every step until the boundary jumps. It holds the part ids of:

- the latest read of each project file, edited since or not (the agent copies its lines
  into the next edit); reads under vendored or installed trees (`node_modules/`,
  `site-packages/`, …) never count, unless the user or the todo list names the file;
- for a file the agent edits, its older views of other ranges too (an agent paging
  through a file with `sed -n A,Bp` and then rewriting it quotes every page), newest
  first while they fit in `FILE_TOKENS` together, the size one output may keep whole;
- the latest output of each command the agent ran at least twice (a test it keeps
  re-running).

A view leaves for good when the same range is read again or the newer views fill the
file's budget. Compressors keep working-set content whole, or far more of it, at every
tier (`deepmem.compressors.working_outputs`); the rest is cut as before. A view that
leaves the set after it became old is cut at the first jump where that pays
(`deepmem.transform.releases`).

Views of the files being worked on stay *whole*, whatever their size. A file is worked on
once the agent edited it, read it again, or the user or an open item of the todo list
named it, by its name or by a code name (`humanModified`) that only it shows among the
files read; its views stay whole until `PriceModel.rent_steps` steps pass without a touch
(a read, an edit, a naming). Liveness is per view (`deepmem.transform.view_uses`): an output
nothing used (a quote of its lines, a change of its file while it is the newest view of its
path, a naming) for as long leaves the working set, and with it its wholeness: a view other
than the newest of its path, the latest run of a repeated command, and the newest view too
once nothing used it since the user's latest request. It leaves however hot its file once an
edit changed lines it shows (what it shows is no longer the file); a view that still shows the
file waits until nothing touched the file for as long either (the agent reading or editing the
file quotes its older pages, and a re-read of a view cut then costs more than its rent); a view
a later view shows again leaves at once. The newest view of a file being changed stays (each
edit of its file uses it), and so does the newest view of each file read or used for the
request at hand: the agent reads the files a request is about before it edits the first of
them, sometimes tens of steps later. A file read once and not yet edited may be about to be: its
view stays whole for the young steps' span after the read (`tail_steps`). An agent reads a
whole file and copies its lines into the edits that follow, often several steps later; a
view cut in the middle makes such an edit fail and the file be read again. The time comes
from the prices, as a rent against a purchase: keeping a view costs its tokens at the
cache-read price on every request, reading it again costs them at the cache-write price
once, so after `write / read` requests without a touch (13 with Anthropic's prices, 10
with OpenAI's, 4 with Gemini's) keeping it has cost as much as a re-read would. The views
kept whole fit together in `deepmem.history.whole_view_tokens`, a share of the context
window, the most recently touched first; once a hot file's views in the set are in, its older
pages past the budget (reads whose range was not read again) come next while room remains, so
that a page still in the set when it became old is not cut because the steps after read the
next page: the agent pages through a file and then quotes every page in its edits. A view that
stops being whole is cut like a view that left the set (`deepmem.transform.releases`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import NamedTuple

import orjson

from deepmem.bill.prices import FAMILIES, PriceModel
from deepmem.history import whole_view_tokens
from deepmem.tokens import estimate_tokens
from deepmem.toolcalls.paths import file_name, same_file
from deepmem.toolcalls.touches import FILE_TOOLS, TODO_TOOLS, Touches
from deepmem.transform.view_uses import ViewUses
from deepmem.types import Message, Part, Settings

VENDORED = re.compile(
    r"(?:^|/)(?:node_modules|site-packages|dist-packages|vendor|third_party|\.venv|venv|\.tox|"
    r"__pycache__|\.git|bower_components|\.cargo/registry|go/pkg/mod)/"
    r"|^/usr/(?:lib|include|share)/"
)
FILE_TOKENS = 2_000
"""A file's views stay in the working set while they fit in this many tokens together
(`working_outputs.WHOLE_TOKENS`: as much as one output keeps whole)."""
WHOLE_TOKENS = whole_view_tokens(Settings())
"""The default budget of the views kept whole (a quarter of the default pressure point)."""
HOT_STEPS = FAMILIES["anthropic"].rent_steps
"""Steps a view of a file worked on stays whole after the file's last touch, at Anthropic's
prices (`PriceModel.rent_steps`: 13)."""
FRESH_STEPS = Settings().tail_steps
"""Steps a view of a file read once and not yet edited stays whole: the young steps' span."""


UNREPEATED_TOOLS = FILE_TOOLS | TODO_TOOLS
"""Tools whose repeated calls are not a command the agent keeps re-running."""
PATH_WORD = re.compile(r"[\w.\-/]+\.\w+")
"""Words of user text or a todo item that look like file names (`app/uploads.py`)."""
CODE_NAME = re.compile(r"\b(?:[a-z]+(?:[A-Z][a-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b")
"""Words of user text or a todo item that look like code names: `humanModified`, `PromptAttribution`, `added_lines`."""
MIN_CODE_NAME = 8
"""Shorter code names (`getId`, `to_str`) are shown by too many files to say which one is meant."""
CODE_RUN = re.compile(rf"[A-Za-z0-9_]{{{MIN_CODE_NAME},}}")
"""A run of the characters code names are made of, long enough to hold one."""
DONE = ("completed", "cancelled")
"""Todo items in these states no longer name what is being worked on."""


class View(NamedTuple):
    """One read of a file: where its output starts, the part that holds it, and the output
    (a tuple: built for every read of every fold)."""

    path: str
    first_line: int
    part_id: str
    output: str


@lru_cache(maxsize=4096)
def is_vendored(path: str) -> bool:
    """True for files under installed or vendored trees, which the agent reads but rarely edits."""
    return VENDORED.search(path) is not None


@lru_cache(maxsize=4096)
def code_runs(output: str) -> str:
    """An output's runs of code-name characters, each once, one a line: a code name occurs in
    the output exactly when it occurs in them, in a text several times shorter (memoized: the
    facts of every boundary and the schedule read the same outputs)."""
    return "\n".join(dict.fromkeys(CODE_RUN.findall(output)))


def input_signature(part: Part) -> str | None:
    """`tool + canonical input` of a completed tool call (None when the input cannot be encoded)."""
    state = part.get("state") or {}
    if state.get("status") != "completed":
        return None
    try:
        return (
            f"{part.get('tool')}\x00{orjson.dumps(state.get('input'), option=orjson.OPT_SORT_KEYS).decode()}"
        )
    except TypeError:
        return None


@lru_cache(maxsize=1024)
def named_code(text: str) -> frozenset[str]:
    """Code names that a user message or todo item mentions (memoized: a history is folded again at every step)."""
    return frozenset(word for word in CODE_NAME.findall(text) if len(word) >= MIN_CODE_NAME)


def open_todo_text(inputs: dict) -> str:
    """What the items of a todo list not yet done say."""
    todos = inputs.get("todos")
    items = [item for item in todos if isinstance(item, dict)] if isinstance(todos, list) else []
    return "\n".join(str(item.get(key) or "") for item in items if item.get("status") not in DONE
                     for key in ("content", "activeForm"))


@lru_cache(maxsize=1024)
def named_files(text: str) -> frozenset[str]:
    """File names (last path component) that a user message or todo item mentions (memoized, as `named_code`)."""
    return frozenset(file_name(word.rstrip(".")) for word in PATH_WORD.findall(text))


class WorkingSetBuilder:
    """Working-set signals folded message by message (one pass serves every boundary)."""

    def __init__(
        self, file_tokens: int = FILE_TOKENS, hot: int = HOT_STEPS, fresh: int = FRESH_STEPS, whole: int = WHOLE_TOKENS
    ) -> None:
        self.file_tokens = file_tokens
        self.hot, self.fresh, self.whole_budget = hot, fresh, whole
        self.step = 0
        """The latest step folded."""
        self.touched: dict[str, int] = {}
        """File name → the last step that read, edited or named a file of that name."""
        self.touches: list[tuple[int, str]] = []
        """(step, file name) of every touch, in order (steps never decrease)."""
        self.whole: frozenset[str] = frozenset()
        """Part ids of the views kept whole, as of the last snapshot."""
        self.reads: dict[str, list[View]] = {}
        """File name → each live read of a file of that name, oldest first."""
        self.sizes: dict[str, int] = {}
        """Part id → estimated tokens of a view's output, for files read more than once."""
        self.named: set[str] = set()
        self.edited: dict[str, set[str]] = {}
        """File name → paths of that name the agent edited or wrote."""
        self.last_run: dict[str, str] = {}
        """Command signature → part id of its latest run."""
        self.repeated: dict[str, str] = {}
        """The same, for commands run at least twice."""
        self.runs: dict[str, str] = {}
        """Tool and command line (the signature for other tools) → part id of its latest run."""
        self.replaced: set[str] = set()
        """Part ids of the runs a later run of the same command replaced."""
        self.files: dict[str, frozenset[str]] = {}
        """File name → part ids of its views in the working set, as of the last snapshot."""
        self.file_outputs: set[str] = set()
        """Part ids of the views in the working set of every file, as of the last snapshot (a view
        belongs to the views of its own file name only)."""
        self.changed: set[str] = set()
        """File names whose views, edits or naming changed since the last snapshot."""
        self.where: dict[str, int] = {}
        """Part id → index of its message in the history, for every view."""
        self.read_counts: dict[str, int] = {}
        """File name → how many views of files of that name were read."""
        self.outputs: dict[str, str] = {}
        """Part id → output text, for every view."""
        self.code_names: dict[str, set[str]] = {}
        """Code name the user or the todo list named → names of the files whose views show it."""
        self.sole_holders: dict[str, int] = {}
        """Name of each file that alone shows some code name named → how many such names it alone shows."""
        self.pages: dict[str, list[View]] = {}
        """File name → each read of a file of that name whose range was not read again, oldest
        first: its live reads, and the older pages past its budget."""
        self.page_views: dict[str, frozenset[str]] = {}
        """File name → part ids of the pages that would be its views without the budget, as of the last snapshot."""
        self.left: dict[str, int] = {}
        """Part id → step at which a view left for good (the same range read again, or past the budget)."""
        self.dropped: dict[str, int] = {}
        """Part id → step at which a view left its file's views (its range read again, or past the budget)."""
        self.uses = ViewUses()
        """When each view and each command run was last used, and which views were superseded
        (`deepmem.transform.view_uses`)."""
        self.idle: frozenset[str] = frozenset()
        """Part ids of the outputs that left the working set unused, as of the last settle."""
        self.view_names: dict[str, str] = {}
        """Part id → the file name of a view."""
        self.asked_at = 0
        """The first step of the user's latest request."""

    def add_request(self, text: str) -> None:
        """Note a message of the user: a request, when it says something, and the files it names."""
        if text.strip():
            self.asked_at = self.step + 1
        self.add_named(text)

    def add_named(self, text: str) -> None:
        """Note the files a user message or a todo list names: by their names, or by a code name
        that only one of the files read shows (the file a request about that name is about)."""
        names = named_files(text)
        new = names - self.named
        self.named |= new
        self.changed |= new
        words = named_code(text)
        new_words = words - self.code_names.keys()
        for word in new_words:
            holders = {name for name, views in self.reads.items() if any(word in code_runs(view.output) for view in views)}
            self.code_names[word] = holders
            if len(holders) == 1:
                self.count_sole(next(iter(holders)), 1)
        held = {name for word in words if len(self.code_names[word]) == 1 for name in self.code_names[word]}
        self.touch(names | held, self.step)
        for name in names | held:
            for view in self.reads.get(name, ()):
                self.uses.use(view.part_id, self.step)

    def count_sole(self, name: str, change: int) -> None:
        """Count one more (+1) or one fewer (-1) code name that only files called `name` show."""
        count = self.sole_holders.get(name, 0) + change
        if count:
            self.sole_holders[name] = count
        else:
            del self.sole_holders[name]

    def add_holder(self, word: str, name: str) -> None:
        """Files called `name` show a code name named: it may gain its sole holder or lose it."""
        holders = self.code_names[word]
        if name in holders:
            return
        if len(holders) == 1:
            self.count_sole(next(iter(holders)), -1)
        holders.add(name)
        if len(holders) == 1:
            self.count_sole(name, 1)

    def add_read(self, read: View, step: int = 0) -> None:
        """A read of a file joins the file's views. An older view of it leaves the working set
        for good when it shows the same range, or once the newer views fill `file_tokens`
        (sizes are estimated only for files read more than once)."""
        path, output = read.path, read.output
        self.changed.add(file_name(path))
        self.touch((file_name(path),), step)
        self.read_counts[file_name(path)] = self.read_counts.get(file_name(path), 0) + 1
        runs = code_runs(output)
        shown = [word for word in self.code_names if word in runs]
        for word in shown:
            self.add_holder(word, file_name(path))
        earlier = {view.part_id: None for views in (self.pages, self.reads) for view in views.get(file_name(path), ())
                   if same_file(view.path, path)}
        self.uses.add_view(read.part_id, output, step, earlier)
        self.view_names[read.part_id] = file_name(path)
        pages = self.pages.setdefault(file_name(path), [])
        pages[:] = [*(view for view in pages if not (same_file(view.path, path) and view.first_line == read.first_line)), read]
        views = self.reads.setdefault(file_name(path), [])
        kept, room = [read], None
        for view in reversed(views):
            if same_file(view.path, path):
                if room is None:
                    room = self.file_tokens - self.view_tokens(read.part_id, output)
                same_range = view.first_line == read.first_line
                tokens = 0 if same_range else self.view_tokens(view.part_id, view.output)
                if same_range or tokens > room:
                    room = room if same_range else 0
                    self.left[view.part_id] = self.dropped[view.part_id] = step
                    continue
                room -= tokens
            kept.append(view)
        views[:] = kept[::-1]

    def view_tokens(self, part_id: str, output: str) -> int:
        """Estimated tokens of a view's output, computed once."""
        tokens = self.sizes.get(part_id)
        if tokens is None:
            tokens = self.sizes[part_id] = estimate_tokens(output)
        return tokens

    def add_edit(self, path: str) -> None:
        """Note a file the agent changed: its older views may stay (it is what the agent works on)."""
        self.edited.setdefault(file_name(path), set()).add(path)
        self.changed.add(file_name(path))
        latest = next((view for view in reversed(self.reads.get(file_name(path), ())) if same_file(view.path, path)), None)
        if latest is not None:
            self.uses.use(latest.part_id, self.step)
        self.touch((file_name(path),), self.step)

    def add_part(self, part: Part, signature: str | None, touched: Touches, index: int = 0, step: int = 0) -> None:
        """Fold one tool part of the message at `index`, made at `step` (`signature`: its
        `input_signature`; `touched`: what the call touches, read once by the facts)."""
        state = part.get("state") or {}
        inputs = state.get("input") if isinstance(state.get("input"), dict) else {}
        if part.get("tool") in TODO_TOOLS:
            self.add_named(open_todo_text(inputs))
        part_id = str(part.get("id", ""))
        quoted = self.uses.quote(inputs, step)
        if quoted and touched.changed:
            self.uses.change(self.views_of(touched.changed, quoted), step)
        if touched.reads and state.get("status") == "completed":
            output = str(state.get("output") or "")
            self.add_read(View(touched.reads[0], touched.first_line, part_id, output), step)
            self.where[part_id] = index
            self.outputs[part_id] = output
            return
        if signature is not None and part.get("tool") not in UNREPEATED_TOOLS:
            if signature in self.last_run:
                if signature in self.repeated:
                    self.left[self.repeated[signature]] = step
                self.repeated[signature] = part_id
            self.uses.use(part_id, step)
            self.last_run[signature] = part_id
            command = f"{part.get('tool')}\x00{touched.command or signature}"
            replaced = self.runs.get(command)
            if replaced is not None:
                self.replaced.add(replaced)
            self.runs[command] = part_id

    def views_of(self, paths: Iterable[str], among: set[str]) -> list[str]:
        """Part ids of the views of files at these paths, among these."""
        return [view.part_id for path in paths for view in self.pages.get(file_name(path), ())
                if view.part_id in among and same_file(view.path, path)]

    def latest_views(self) -> set[str]:
        """Part ids of the newest view of each path."""
        latest: dict[str, str] = {}
        for views in self.reads.values():
            for view in views:
                latest[view.path] = view.part_id
        return set(latest.values())

    def newest_in_use(self) -> set[str]:
        """The newest view of each path, no edit changed, that the agent used since the user's latest
        request (an edit of its file uses it too)."""
        used = self.uses.used
        return {part_id for part_id in self.latest_views() - self.uses.changed.keys() if used.get(part_id, -1) >= self.asked_at}

    def lapsed(self, outputs: Iterable[str], newest: set[str]) -> frozenset[str]:
        """The outputs past their use: a later view superseded it, or it is not among the `newest`
        views in use and nothing used it for `hot` steps, while an edit changed lines it shows or
        nothing touched its file (a read, an edit, a naming) for as long either (one pass over every
        output at every settle: kept to plain lookups)."""
        since = self.step - self.hot
        superseded, used, changed = self.uses.superseded, self.uses.used, self.uses.changed
        touched, names = self.touched, self.view_names
        return frozenset(
            part_id for part_id in outputs
            if part_id in superseded or (part_id not in newest and used.get(part_id, since) < since
                                         and (part_id in changed or touched.get(names.get(part_id, ""), -1) < since)))

    def file_views(self, name: str, views: Iterable[View]) -> frozenset[str]:
        """Part ids of the working-set views among these views of files called `name`: the latest
        of each path, and every one of a path edited."""
        edited = self.edited.get(name, ())
        ids: set[str] = set()
        latest: dict[str, str] = {}
        for view in views:
            if name in self.named or not is_vendored(view.path):
                latest[view.path] = view.part_id
                if any(same_file(view.path, other) for other in edited):
                    ids.add(view.part_id)
        return frozenset(ids.union(latest.values()))

    def settle(self) -> None:
        """Bring the views of each file and the views kept whole up to now (only files changed
        since the last time are looked at again)."""
        for name in self.changed:
            views = self.file_views(name, self.reads.get(name, ()))
            self.file_outputs.difference_update(self.files.get(name, ()))
            self.file_outputs.update(views)
            self.files[name] = views
            self.page_views[name] = self.file_views(name, self.pages.get(name, ()))
        self.changed.clear()
        self.keep_whole()

    def snapshot(self) -> frozenset[str]:
        """Part ids of the working set as it stands now (settled first)."""
        self.settle()
        ids = set(self.repeated.values())
        for views in self.files.values():
            ids |= views
        return frozenset(ids)

    def worked_on(self, name: str) -> bool:
        """Whether files called `name` were edited, named by the user or the todo list (by name, or by a
        code name only they show), or read again."""
        return (name in self.edited or name in self.named or self.read_counts.get(name, 0) > 1
                or name in self.sole_holders)

    def touch(self, names: Iterable[str], step: int) -> None:
        """Note that files of these names were read, edited or named at `step`."""
        for name in names:
            self.touched[name] = step
            self.touches.append((step, name))

    def recently_touched(self, steps: int) -> dict[str, int]:
        """File name → last touch, for the files touched within the last `steps` steps."""
        recent: dict[str, int] = {}
        for step, name in reversed(self.touches):
            if step < self.step - steps:
                break
            recent.setdefault(name, self.touched[name])
        return recent

    def whole_read_since(self, first: int, end: int, message_steps: tuple[int, ...], step: int) -> frozenset[str]:
        """The views kept whole now that messages `first` … `end`−1 hold, read at `step` or later."""
        return frozenset(part_id for part_id in self.whole
                         if first <= self.where[part_id] < end and message_steps[self.where[part_id]] >= step)

    def keep_whole(self) -> None:
        """Note the working-set outputs past their use (`lapsed`), which leave the set, then choose
        the views kept whole now, and note when the others stopped being whole: the working-set
        views of files worked on and touched within the last `hot` steps, or read once within the
        last `fresh` (about to be edited), newest touch first while they fit; then the older pages
        of the same files that their budget left out, while they still fit."""
        hot = sorted(
            (touch, name)
            for name, touch in self.recently_touched(max(self.hot, self.fresh)).items()
            if name in self.files and touch >= self.step - (self.hot if self.worked_on(name) else self.fresh)
        )
        idle = self.lapsed(self.file_outputs.union(self.repeated.values()), self.newest_in_use())
        for part_id in idle - self.idle:
            self.left[part_id] = self.step
        self.idle = idle
        whole: set[str] = set()
        room = self.whole_budget
        for views in (self.files, self.page_views):
            for _, name in reversed(hot):
                for part_id in sorted((views[name] & self.outputs.keys()) - whole - idle):
                    tokens = self.view_tokens(part_id, self.outputs[part_id])
                    if tokens <= room:
                        room -= tokens
                        whole.add(part_id)
        for part_id in self.whole - whole:
            self.left[part_id] = self.step
        self.whole = frozenset(whole)


def user_text(message: Message) -> str:
    """The text a user typed in one message (synthetic parts left out)."""
    if message["info"]["role"] != "user":
        return ""
    return "\n".join(
        part["text"]
        for part in message["parts"]
        if part.get("type") == "text" and not part.get("synthetic") and isinstance(part.get("text"), str)
    )


def sized_builder(settings: Settings, prices: PriceModel) -> WorkingSetBuilder:
    """The working set as these settings and prices size it: hot for the prices' rent, fresh
    for the tail, whole views within their share of the window."""
    return WorkingSetBuilder(hot=prices.rent_steps, fresh=settings.tail_steps, whole=whole_view_tokens(settings))
