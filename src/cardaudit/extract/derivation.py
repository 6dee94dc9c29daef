"""Lineage facts: the claimed bases, the chain model → base → base's base, and how the
model's structure and tokenizer differ from each base whose evidence we have."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cardaudit.extract.code_derivation import derived_files
from cardaudit.extract.lineage import all_claims, claimed_relation, declared_bases, same_model
from cardaudit.extract.structure import Difference, compare, structure_of
from cardaudit.extract.tokenizer import TokenizerComparison, compare_tokenizers, tokenizer_facts
from cardaudit.model import BaseModelRef, Evidence

MAX_DEPTH = 6


@dataclass(frozen=True)
class BasePair:
    """A base model the repo claims, and the evidence fetched for it (when any)."""

    ref: BaseModelRef | None
    evidence: Evidence | None

    @property
    def id(self) -> str:
        if self.ref is not None:
            return self.ref.id
        return self.evidence.target.id if self.evidence is not None else "?"


def pair_bases(evidence: Evidence) -> list[BasePair]:
    """Claimed bases matched with ``evidence.base`` (a lone base pairs with a lone claim)."""
    bases = declared_bases(all_claims(evidence))
    unmatched = list(evidence.base)
    pairs: list[BasePair] = []
    for ref in bases:
        match = next((b for b in unmatched if same_model(ref.id, b.target.id)), None)
        if match is None and len(bases) == 1 and len(unmatched) == 1:
            match = unmatched[0]
        if match is not None:
            unmatched.remove(match)
        pairs.append(BasePair(ref, match))
    pairs += [BasePair(None, base) for base in unmatched]
    return pairs


def relation_of(evidence: Evidence) -> str | None:
    """The relation claimed for the model (``Evidence.base_relation`` when the source set it)."""
    claimed = claimed_relation(evidence, all_claims(evidence))
    return claimed or evidence.base_relation


def structure_differences(evidence: Evidence, base: Evidence) -> list[Difference]:
    return compare(structure_of(evidence), structure_of(base))


def tokenizer_comparison(evidence: Evidence, base: Evidence) -> TokenizerComparison | None:
    mine, theirs = tokenizer_facts(evidence), tokenizer_facts(base)
    if mine is None or theirs is None:
        return None
    return compare_tokenizers(mine, theirs)


def _licence(evidence: Evidence | None) -> str | None:
    if evidence is None or evidence.card is None:
        return None
    value = evidence.card.metadata.get("license")
    return str(value) if isinstance(value, str | int | float) else None


def lineage_chain(evidence: Evidence, licence: str | None) -> list[dict[str, Any]]:
    """Links model → base → base's base…, each with its licence, relation and source."""
    links: list[dict[str, Any]] = [
        {
            "id": evidence.target.id,
            "of": None,
            "depth": 0,
            "relation": None,
            "licence": licence,
            "source": None,
            "evidence": evidence.target.kind,
        }
    ]

    def walk(child: Evidence, child_id: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            return
        relation = relation_of(child)
        for pair in pair_bases(child):
            link_relation = (pair.ref.relation if pair.ref else None) or relation
            links.append(
                {
                    "id": pair.id,
                    "of": child_id,
                    "depth": depth,
                    "relation": link_relation,
                    "licence": _licence(pair.evidence),
                    "source": pair.ref.source if pair.ref else "evidence",
                    "evidence": pair.evidence.target.kind if pair.evidence else None,
                }
            )
            if pair.evidence is not None:
                walk(pair.evidence, pair.id, depth + 1)

    walk(evidence, evidence.target.id, 1)
    return links


def derivation_report(evidence: Evidence) -> list[dict[str, Any]]:
    """For each base with evidence: structure and tokenizer differences, explained."""
    out = []
    relation = relation_of(evidence)
    for pair in pair_bases(evidence):
        if pair.evidence is None:
            continue
        tokenizer = tokenizer_comparison(evidence, pair.evidence)
        out.append(
            {
                "base": pair.id,
                "relation": relation,
                "differences": [
                    d.to_json() for d in structure_differences(evidence, pair.evidence)
                ],
                "tokenizer": tokenizer.to_json() if tokenizer else None,
            }
        )
    return out


def derivation_facts(
    evidence: Evidence, licence: str | None
) -> tuple[tuple[BaseModelRef, ...], dict[str, Any]]:
    """(every lineage claim, extra facts: ``lineage`` chain and ``derivation`` comparisons)."""
    claims = all_claims(evidence)
    extra: dict[str, Any] = {"lineage": lineage_chain(evidence, licence)}
    extra["derivation"] = derivation_report(evidence)
    extra["code_derivation"] = [item.to_json() for item in derived_files(evidence)]
    return claims, extra
