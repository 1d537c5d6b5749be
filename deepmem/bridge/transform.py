"""The transform op: plan a session's history and reply with the edits the plugin lacks."""

from __future__ import annotations

import msgspec

from deepmem.bill.frame import OPENCODE_FRAME_TOKENS
from deepmem.bill.prices import PriceModel, model_family, resolve_prices
from deepmem.bridge.edits import append_edit, diff_held
from deepmem.bridge.injection import Injection
from deepmem.bridge.protocol import ProtocolError, Transform, TransformReply, WireEdit
from deepmem.bridge.session import absorb, forget_held
from deepmem.bridge.sessions import Sessions, state_key
from deepmem.bridge.stats import plan_totals
from deepmem.bridge.tools import TOOL_SCHEMA_TOKENS
from deepmem.project.config import Config
from deepmem.tokens import estimate_tokens
from deepmem.transform.additions import passed_ids
from deepmem.transform.jumps import RequestFrame
from deepmem.transform.plan import TransformPlan, plan_transform
from deepmem.transform.window import model_limits, pressure_tokens
from deepmem.types import Message, Settings
from deepmem.vault.ccr import CCRStore

STORED_KEYS_CAP = 100_000
"""Keys remembered as already on disk (past it the set starts again: a put of a stored key is a no-op)."""


class Transformer:
    """Plans every session's history with the project's settings; originals go to CCR."""

    def __init__(self, config: Config, sessions: Sessions, store: CCRStore, injection: Injection):
        self.config = config
        self.sessions = sessions
        self.store = store
        self.injection = injection
        self.stored_keys: set[str] = set()

    def transform(self, request: Transform) -> TransformReply:
        """Plan the history, and reply with only the edits the plugin does not hold yet."""
        # OpenCode's compaction transforms a cut-down copy of the history: it gets its own
        # state, so the session's latest messages and held edits stay as they are.
        state = self.sessions.get(state_key(request.session, request.compaction))
        try:
            messages = absorb(state, request)
        except ProtocolError as exc:
            if exc.code == "resync":
                forget_held(state)
            raise
        # The plugin's transport digests already name each message's content.
        prices = self.session_prices(request.session, messages)
        settings = self.session_settings(request.session)
        plan = plan_transform(
            messages,
            settings,
            digests=[digest.encode() for digest in state.digests],
            prices=prices,
            frame=self.request_frame(state.stable_block, self.request_ceiling(request.session, messages, settings)),
        )
        self.store_originals(plan)
        # "d" is the transport digest of the part the edit replaces: the plugin applies the
        # edit only while the stored part is still that one.
        wanted = {
            edit.part_id: WireEdit(
                key=edit.part_id,
                message=edit.message_id,
                d=state.parts[edit.part_id][0] if edit.part_id in state.parts else "",
                part=edit.part,
            )
            for edit in plan.edits
        }
        if not request.compaction:
            self.injection.add_whisper(state, request.session, messages)
            passed = passed_ids(messages, plan.layout)
            wanted.update((key, edit) for key, edit in state.appends.items() if edit.message not in passed)
            wanted.update(tail_edits(request.session, plan, messages))
            state.saved = plan_totals(plan, prices)
        edits, drop = diff_held(state, wanted)
        return TransformReply(
            edits=edits, drop=drop, step=plan.layout.step, boundary=plan.layout.boundary, tier=plan.tier
        )

    def session_settings(self, session_id: str) -> Settings:
        """The settings for one session: the model's context window unless config.toml sets one."""
        window = self.sessions.get(session_id).context_window
        if self.config.compress.context_window or not window:
            return self.config.compress
        return msgspec.structs.replace(self.config.compress, context_window=window)

    def request_frame(self, stable_block: str | None, ceiling: int = 0) -> RequestFrame:
        """What every request of a session carries before its messages, estimated: OpenCode's system
        prompt and tools and the user's own (`[cost] frame_tokens`); deepmem's tool schemas and the
        session's stable block (frozen at its first request: none is known before it, when no jump can
        be made); and the `ceiling` a whole request must stay under."""
        return RequestFrame(
            host=OPENCODE_FRAME_TOKENS + self.config.cost.frame_tokens,
            added=TOOL_SCHEMA_TOKENS + estimate_tokens(stable_block or ""),
            ceiling=ceiling,
        )

    def request_ceiling(self, session_id: str, messages: list[Message], settings: Settings) -> int:
        """The estimated tokens a whole request of the session may carry before the host would compact it:
        the limits of the model OpenCode passed (its window, or the configured one), over the
        tokenizer ratio of the model's family (`deepmem.transform.window`)."""
        model = self.sessions.get(session_id).model
        return pressure_tokens(model_limits(model, settings.context_window), model_family(messages, model).name)

    def session_prices(self, session_id: str, messages: list[Message]) -> PriceModel:
        """The prices the session's jumps are weighed with: `[cost]`, else the model's own as
        OpenCode passed them, else the family the model or the messages name."""
        return resolve_prices(messages, self.sessions.get(session_id).model, self.config.cost.prices)

    def store_originals(self, plan: TransformPlan) -> None:
        """Put each new original into CCR once per engine (the disk write is skipped after)."""
        if len(self.stored_keys) > STORED_KEYS_CAP:
            self.stored_keys.clear()
        for original in plan.originals:
            if original.key not in self.stored_keys:
                self.store.put(original.key, original.text)
                self.stored_keys.add(original.key)


def tail_edits(session_id: str, plan: TransformPlan, messages: list[Message]) -> dict[str, WireEdit]:
    """This step's nudges, appended to the message that is last now (as the CLI does)."""
    if not messages or not plan.tail_parts:
        return {}
    message_id = str(messages[-1]["info"].get("id", ""))
    edits = {}
    for part in plan.tail_parts:
        edit = append_edit(session_id, message_id, dict(part), trailing=True)
        edits[edit.key] = edit
    return edits
