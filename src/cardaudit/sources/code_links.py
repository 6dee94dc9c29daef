"""Find the model's own code repo among the GitHub links of its card, and say why."""

from __future__ import annotations

import re
from dataclasses import dataclass

from cardaudit.model import Card

GITHUB_LINK = re.compile(
    r"https?://(?:www\.)?github\.com/([A-Za-z0-9][\w.-]*)/([A-Za-z0-9_.-]+)", re.IGNORECASE
)
#: Owners / repos that are tools or dependencies, not a model's own code.
TOOLING = {
    "huggingface",
    "vllm-project",
    "ggerganov",
    "ggml-org",
    "sgl-project",
    "ollama",
    "lm-sys",
    "eleutherai/lm-evaluation-harness",
    "openai/human-eval",
    "microsoft/deepspeed",
    "pytorch",
    "nvidia/tensorrt-llm",
    "lmstudio-ai",
    "mlc-ai",
    "oobabooga",
    "unslothai",
    "axolotl-ai-cloud",
    "hiyouga/llama-factory",
    "arcee-ai/mergekit",
    "cg123/mergekit",
    "turboderp",
    "qwenlm/qwen-agent",
}
CODE_WORDS = re.compile(
    r"\b(code|github|repo(sitory)?|training|train|source|implementation|scripts?|release)\b",
    re.IGNORECASE,
)
NOISE_NAMES = {"issues", "pulls", "blob", "tree", "releases", "wiki", "discussions"}


@dataclass(frozen=True)
class CodeLink:
    url: str
    line: int
    score: int
    reasons: tuple[str, ...]


#: Words too common in repo names to tie a link to a model.
GENERIC = {
    "model",
    "models",
    "llm",
    "llms",
    "code",
    "the",
    "and",
    "hub",
    "chat",
    "instruct",
    "base",
}


def _tokens(text: str) -> set[str]:
    words = re.split(r"[^a-z0-9]+", text.lower())
    return {word for word in words if len(word) >= 3 and word not in GENERIC}


def candidate_links(card: Card, model_id: str) -> list[CodeLink]:
    """Every distinct GitHub repo linked from the card, best candidate first."""
    model_tokens = _tokens(model_id.rsplit("/", 1)[-1]) | _tokens(model_id.split("/", 1)[0])
    owner_tokens = _tokens(model_id.split("/", 1)[0]) if "/" in model_id else set()
    seen: dict[str, CodeLink] = {}
    for number, line in enumerate(card.raw.splitlines(), start=1):
        for match in GITHUB_LINK.finditer(line):
            owner, name = match.group(1), match.group(2).removesuffix(".git").rstrip(".")
            if not name or name.lower() in NOISE_NAMES:
                continue
            key = f"{owner}/{name}".lower()
            if key in seen:
                continue
            if owner.lower() in TOOLING or key in TOOLING:
                continue
            score, reasons = 0, []
            shared = _tokens(name) & model_tokens
            if shared:
                score += 3 * len(shared)
                reasons.append(f"its name shares {', '.join(sorted(shared))} with the model")
            if owner_tokens and _tokens(owner) & owner_tokens:
                score += 2
                reasons.append("same owner as the model repo")
            if CODE_WORDS.search(line):
                score += 1
                reasons.append("the line mentions code/training/repository")
            if number < card.body_start_line:
                score += 1
                reasons.append("linked from the front matter")
            url = f"https://github.com/{owner}/{name}"
            seen[key] = CodeLink(url, number, score, tuple(reasons) or ("the only kind of link",))
    return sorted(seen.values(), key=lambda link: (-link.score, link.line))


def choose_code_link(card: Card | None, model_id: str) -> tuple[CodeLink | None, dict]:
    """The chosen link (or None) and a JSON-ready record of the choice and its reasons."""
    if card is None:
        return None, {"chosen": None, "reason": "no model card", "candidates": []}
    links = candidate_links(card, model_id)
    record = {
        "candidates": [{"url": link.url, "line": link.line, "score": link.score} for link in links]
    }
    if not links:
        record |= {"chosen": None, "reason": "the card links no GitHub repository of its own"}
        return None, record
    best = links[0]
    tie = len(links) > 1 and links[1].score == best.score
    reason = "; ".join(best.reasons)
    if tie:
        reason += " (tied with another link; the first one in the card was taken)"
    record |= {"chosen": best.url, "line": best.line, "reason": reason}
    return best, record
