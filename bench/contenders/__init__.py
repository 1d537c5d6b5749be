"""The named contenders and corpora of `python -m bench`: one registry, listed in --help."""

from __future__ import annotations

from collections.abc import Callable

from bench.contenders.masking import MaskOldOutputs
from bench.contenders.opencode_prune import OpenCodePrune
from bench.corpora import corpora
from deepmem.accounting import DEFAULT_PRICES
from deepmem.replay import Contender, Deepmem, Uncompressed
from deepmem.types import Settings


class Unavailable(Exception):
    """A contender that cannot run here; the message says why."""


def headroom() -> Contender:
    """headroom-ai's compress, or Unavailable when the package cannot be imported."""
    try:
        from bench.contenders.headroom import Headroom
    except ImportError as exc:
        raise Unavailable(f"headroom-ai is not installed ({exc}); pip install -e '.[bench]'") from None
    return Headroom()


def deepmem_at(tier: str | None) -> Callable[[], Contender]:
    """deepmem at default settings, at a fixed tier (None: the automatic one), its jumps priced
    for the prices the comparison bills (`deepmem.accounting.DEFAULT_PRICES`)."""
    name = f"deepmem-{tier}" if tier else "deepmem"
    return lambda: Deepmem(Settings(), tier, name, prices=DEFAULT_PRICES)


CONTENDERS: dict[str, tuple[str, Callable[[], Contender]]] = {
    "none": ("no compression: the history as recorded", Uncompressed),
    "opencode-prune": (
        "OpenCode 1.18's prune (compaction.prune: true): after a user turn, old tool outputs beyond the newest 40K tokens cleared",
        OpenCodePrune,
    ),
    "opencode-prune-each-step": (
        "the same prune rule run before every step (hypothetical; OpenCode runs it once per turn)",
        lambda: OpenCodePrune(every_step=True),
    ),
    "mask-last-10-sliding": ("observation masking: all but the newest 10 tool outputs cleared, every step", MaskOldOutputs),
    "mask-last-10-every-10": (
        "observation masking in batches: the same cut moved every 10 steps",
        lambda: MaskOldOutputs(keep=10, every=10),
    ),
    "headroom": ("headroom-ai's headroom.compress on the OpenAI-format messages, defaults, model gpt-4o", headroom),
    "deepmem": ("deepmem at default settings, tier chosen by history size", deepmem_at(None)),
    "deepmem-low": ("deepmem at default settings, tier low", deepmem_at("low")),
    "deepmem-medium": ("deepmem at default settings, tier medium", deepmem_at("medium")),
    "deepmem-high": ("deepmem at default settings, tier high", deepmem_at("high")),
}
"""name → (what it is, factory of a fresh instance per session). `none` is the baseline."""

def help_text() -> str:
    """The contenders and corpora, for --help."""
    lines = ["contenders:"]
    lines += [f"  {name:<26}{about}" for name, (about, _) in CONTENDERS.items()]
    lines += ["", "corpora (or any folder of `opencode export` files):"]
    lines += [f"  {name:<26}{folder}" for name, folder in corpora().items()]
    return "\n".join(lines)

