"""Tokenizer facts (vocabulary, special tokens, hash of tokenizer.json) and base comparison."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cardaudit.bounded import loads_json
from cardaudit.model import Evidence, frozen_mapping

TOKENIZER_FILE = "tokenizer.json"
TOKENIZER_CONFIG = "tokenizer_config.json"
ROLE_KEYS = ("bos_token", "eos_token", "pad_token", "unk_token")


@dataclass(frozen=True)
class TokenizerFacts:
    sha256: str | None = None
    vocab: Mapping[str, int] = field(default_factory=frozen_mapping)
    special: Mapping[str, int] = field(default_factory=frozen_mapping)
    roles: Mapping[str, str] = field(default_factory=frozen_mapping)
    skipped: str | None = None

    @property
    def size(self) -> int | None:
        return len(set(self.vocab.values())) if self.vocab else None

    def to_json(self) -> dict[str, Any]:
        return {
            "sha256": self.sha256,
            "vocab_size": self.size,
            "special_tokens": len(self.special),
            **({"skipped": self.skipped} if self.skipped else {}),
        }


def _role(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    return None


def tokenizer_facts(evidence: Evidence) -> TokenizerFacts | None:
    """What tokenizer.json and tokenizer_config.json say; None when neither is present."""
    text = evidence.repo.text(TOKENIZER_FILE)
    config = evidence.json_file(TOKENIZER_CONFIG)
    skipped = evidence.repo.skipped.get(TOKENIZER_FILE)
    if text is None and not isinstance(config, dict) and skipped is None:
        return None
    roles = {}
    if isinstance(config, dict):
        roles = {key: role for key in ROLE_KEYS if (role := _role(config.get(key))) is not None}
    if text is None:
        return TokenizerFacts(roles=frozen_mapping(roles), skipped=skipped)
    digest = hashlib.sha256(text.text.encode("utf-8")).hexdigest()
    try:
        data = loads_json(text.text, max_depth=None)
    except ValueError:
        return TokenizerFacts(sha256=digest, roles=frozen_mapping(roles))
    vocab: dict[str, int] = {}
    special: dict[str, int] = {}
    model = data.get("model") if isinstance(data, dict) else None
    raw_vocab = model.get("vocab") if isinstance(model, dict) else None
    if isinstance(raw_vocab, dict):
        vocab = {str(k): v for k, v in raw_vocab.items() if isinstance(v, int)}
    elif isinstance(raw_vocab, list):  # Unigram: [[piece, score], ...]
        vocab = {
            str(item[0]): index
            for index, item in enumerate(raw_vocab)
            if isinstance(item, list) and item
        }
    for token in data.get("added_tokens") or () if isinstance(data, dict) else ():
        if isinstance(token, dict) and isinstance(token.get("id"), int):
            content = str(token.get("content"))
            vocab[content] = token["id"]
            if token.get("special"):
                special[content] = token["id"]
    return TokenizerFacts(
        sha256=digest,
        vocab=frozen_mapping(vocab),
        special=frozen_mapping(special),
        roles=frozen_mapping(roles),
    )


@dataclass(frozen=True)
class TokenizerComparison:
    identical: bool | None
    explanations: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "identical": self.identical,
            "explanations": list(self.explanations),
            "problems": list(self.problems),
        }


def compare_tokenizers(model: TokenizerFacts, base: TokenizerFacts) -> TokenizerComparison:
    """Explain how ``model``'s tokenizer differs from ``base``'s; problems break a fine-tune."""
    if model.sha256 and base.sha256 and model.sha256 == base.sha256:
        return TokenizerComparison(True, ("tokenizer.json identical to the base's",))
    explanations: list[str] = []
    problems: list[str] = []
    if model.vocab and base.vocab:
        added = sorted(set(model.vocab) - set(base.vocab), key=lambda t: model.vocab[t])
        removed = sorted(set(base.vocab) - set(model.vocab), key=lambda t: base.vocab[t])
        moved = sorted(
            (t for t in set(model.vocab) & set(base.vocab) if model.vocab[t] != base.vocab[t]),
            key=lambda t: base.vocab[t],
        )
        if model.size != base.size:
            explanations.append(f"tokenizer vocabulary {base.size:,} → {model.size:,}")
        if added:
            sample = ", ".join(repr(t) for t in added[:3])
            explanations.append(f"{len(added):,} token(s) added: {sample}")
        if removed:
            sample = ", ".join(repr(t) for t in removed[:3])
            problems.append(f"{len(removed):,} base token(s) removed: {sample}")
        if moved:
            token = moved[0]
            problems.append(
                f"{len(moved):,} base token(s) have new ids, e.g. {token!r} "
                f"{base.vocab[token]} → {model.vocab[token]}"
            )
    for token in base.special:
        if token not in model.special and token in model.vocab:
            problems.append(f"special token {token!r} is no longer special")
    for role in ROLE_KEYS:
        mine, theirs = model.roles.get(role), base.roles.get(role)
        if mine and theirs and mine != theirs:
            explanations.append(f"{role} {theirs!r} → {mine!r}")
    identical = None if not (model.sha256 and base.sha256) else False
    if identical is False and not explanations and not problems:
        explanations.append("tokenizer.json differs in form only: same vocabulary and specials")
    return TokenizerComparison(identical, tuple(explanations), tuple(problems))
