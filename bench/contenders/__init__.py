"""The one registry of what the benchmarks compare, listed in --help.

Every contender registers the same way: a name, what it is, and a maker that, given the
session about to be replayed (`Session`), returns fresh contenders for it. A priced
contender (deepmem, its fixed tiers, the hindsight optimum) returns one per price model
the run bills, each named `NAME@MODEL` and billed only under that model; the others
return one. `python -m bench` and `python -m bench.replay` pick their contenders from
here by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import msgspec

from bench.contenders.hindsight import Hindsight
from bench.contenders.masking import MaskOldOutputs
from bench.contenders.opencode_prune import OpenCodePrune
from bench.corpora import corpora
from deepmem.bill.prices import PriceModel, with_lifetime
from deepmem.replay.loop import Contender, Deepmem, Uncompressed
from deepmem.transform.additions import Additions
from deepmem.types import Message, Settings


class Unavailable(Exception):
    """A contender that cannot run here; the message says why."""


class Session(msgspec.Struct, frozen=True):
    """What a maker may know of the session its contenders replay."""

    messages: list[Message]
    prices: tuple[PriceModel, ...]
    """The price models the run bills."""
    additions: Additions = Additions()
    """What deepmem adds to this session's requests (`bench.frames`)."""
    settings: Settings = Settings()
    one_hour: bool = False
    """The session writes 1-hour cache entries: a priced contender schedules for those prices."""
    frame: int = 0
    """Tokens of the host's frame every request carries before its messages (`bench.frames`)."""


class Entry(NamedTuple):
    """One registered contender: what it is, and its maker."""

    about: str
    make: Callable[[Session], list[Contender]]


CONTENDERS: dict[str, Entry] = {}
"""name → Entry. `none` is the baseline every ratio is taken against."""


def register(name: str, about: str, make: Callable[[Session], list[Contender]]) -> None:
    """Add a contender to the registry (a name registered again is replaced)."""
    CONTENDERS[name] = Entry(about, make)


def one(make: Callable[[], Contender]) -> Callable[[Session], list[Contender]]:
    """A maker for a contender that ignores the session and the prices."""
    return lambda session: [make()]


def priced(make: Callable[[Session, PriceModel], Contender]) -> Callable[[Session], list[Contender]]:
    """A maker of one contender per price model billed."""
    return lambda session: [make(session, model) for model in session.prices]


def deepmem(name: str, tier: str | None = None, **changes: object) -> Callable[[Session, PriceModel], Contender]:
    """deepmem at the session's settings (with `changes`), at a fixed tier or the automatic one,
    its jumps priced for the model it is billed with, with the session's additions."""

    def make(session: Session, model: PriceModel) -> Contender:
        settings = msgspec.structs.replace(session.settings, **changes) if changes else session.settings
        prices = with_lifetime(model, session.one_hour)
        return Deepmem(settings, tier, f"{name}@{model.name}", prices=prices, additions=session.additions)

    return make


def headroom(session: Session) -> list[Contender]:
    """headroom-ai's compress, or Unavailable when the package cannot be imported."""
    try:
        from bench.contenders.headroom import Headroom
    except ImportError as exc:
        raise Unavailable(f"headroom-ai is not installed ({exc}); pip install -e '.[bench]'") from None
    return [Headroom()]


def context_editing(session: Session) -> list[Contender]:
    """Anthropic's context editing at its defaults, its trigger counting the session's frame too."""
    from bench.contenders.context_editing import ContextEditing  # exact o200k counts: the bench extra

    return [ContextEditing(session.frame)]


def hindsight(session: Session, model: PriceModel) -> Contender:
    """The cheapest schedule knowing the whole session, for the prices it is billed at (named for `model`)."""
    player = Hindsight(session.settings, with_lifetime(model, session.one_hour), session.messages, session.additions)
    player.name = f"hindsight@{model.name}"
    return player


def register_fixed_point(tail: int, batch: int) -> str:
    """Register the old fixed schedule at one (tail_steps, batch_steps) point; its name."""
    name = f"fixed-tail{tail}-batch{batch}"
    register(
        name,
        f"deepmem on the old fixed schedule, tail {tail}, batch {batch}",
        priced(deepmem(name, tail_steps=tail, batch_steps=batch, schedule="fixed")),
    )
    return name


register("none", "no compression: the history as recorded", one(Uncompressed))
register(
    "opencode-prune",
    "OpenCode 1.18's prune (compaction.prune: true): after a user turn, old tool outputs beyond the newest 40K tokens cleared",
    one(OpenCodePrune),
)
register(
    "opencode-prune-each-step",
    "the same prune rule run before every step (hypothetical; OpenCode runs it once per turn)",
    one(lambda: OpenCodePrune(every_step=True)),
)
register("mask-last-10-sliding", "observation masking: all but the newest 10 tool outputs cleared, every step", one(MaskOldOutputs))
register(
    "mask-last-10-every-10",
    "observation masking in batches: the same cut moved every 10 steps",
    one(lambda: MaskOldOutputs(keep=10, every=10)),
)
register(
    "context-editing",
    "Anthropic's context editing (clear_tool_uses_20250919) at its defaults: past 100K input tokens, every tool result but the newest 3 cleared",
    context_editing,
)
register("headroom", "headroom-ai's headroom.compress on the OpenAI-format messages, defaults, model gpt-4o", headroom)
register("deepmem", "deepmem at default settings, tier chosen by history size, priced for each model billed", priced(deepmem("deepmem")))
for _tier in ("low", "medium", "high"):
    register(f"deepmem-{_tier}", f"deepmem at default settings, tier {_tier}", priced(deepmem(f"deepmem-{_tier}", _tier)))
register("deepmem-fixed", "deepmem on the old fixed schedule (tail 4, batch 10)", priced(deepmem("deepmem-fixed", schedule="fixed")))
register(
    "deepmem-unmarked",
    "deepmem without its own cache mark ([compress] cache_mark = false)",
    priced(deepmem("deepmem-unmarked", cache_mark=False)),
)
register(
    "hindsight",
    "deepmem with the cheapest schedule of jumps knowing the whole session, per price model",
    priced(hindsight),
)
for _tail, _batch in ((2, 10), (4, 20)):
    register_fixed_point(_tail, _batch)


def make_contenders(names: list[str], session: Session) -> tuple[list[Contender], dict[str, str]]:
    """Fresh contenders for one session, in the order named, and the ones that cannot run with the reason."""
    players: list[Contender] = []
    skipped: dict[str, str] = {}
    for name in names:
        try:
            players.extend(CONTENDERS[name].make(session))
        except Unavailable as exc:
            skipped[name] = str(exc)
    return players, skipped


def parse_names(text: str) -> list[str]:
    """'a,b' → ['none', 'a', 'b'] after checking each name against the registry."""
    names = [name for name in text.split(",") if name]
    unknown = [name for name in names if name not in CONTENDERS]
    if unknown:
        raise ValueError(f"unknown contender {', '.join(unknown)}; known: {', '.join(CONTENDERS)}")
    return ["none", *[name for name in names if name != "none"]]


def help_text() -> str:
    """The contenders and corpora, for --help."""
    lines = ["contenders:"]
    lines += [f"  {name:<26}{entry.about}" for name, entry in CONTENDERS.items()]
    lines += ["", "corpora (or any folder of `opencode export` files):"]
    lines += [f"  {name:<26}{folder}" for name, folder in corpora().items()]
    return "\n".join(lines)
