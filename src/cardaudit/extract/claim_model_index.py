"""The card's ``model-index`` results that name neither a source nor a verified flag: one
claim (split from :mod:`cardaudit.extract.claims`)."""

from __future__ import annotations

from cardaudit.model import Claim, Evidence


def model_index_claim(evidence: Evidence) -> Claim | None:
    """The card's ``model-index`` results that have neither a source nor a verified flag."""
    card = evidence.card
    if card is None or card.error:
        return None
    index = card.metadata.get("model-index")
    if not isinstance(index, list):
        return None
    unsourced: list[str] = []
    for entry in index:
        results = entry.get("results") if isinstance(entry, dict) else None
        for result in results if isinstance(results, list) else ():
            if not isinstance(result, dict):
                continue
            source = result.get("source")
            has_source = isinstance(source, dict) and bool(source.get("url") or source.get("name"))
            dataset = result.get("dataset") if isinstance(result.get("dataset"), dict) else {}
            name = str(dataset.get("name") or dataset.get("type") or "unnamed dataset")
            metrics = result.get("metrics") if isinstance(result.get("metrics"), list) else []
            for metric in metrics:
                if not isinstance(metric, dict):
                    continue
                if has_source or metric.get("verified") is True:
                    continue
                label = metric.get("name") or metric.get("type") or "metric"
                unsourced.append(f"{name} {label}: {metric.get('value')}")
    if not unsourced:
        return None
    return Claim(
        kind="model_index",
        text=f"model-index: {len(unsourced)} result(s) without a source or verified flag",
        path=card.path,
        line=card.key_line("model-index") or 1,
        missing=("source", "verified flag"),
        values=tuple(unsourced),
    )
