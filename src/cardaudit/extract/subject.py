"""What a block of prose is about (see :mod:`cardaudit.extract.reading`)."""

from __future__ import annotations

from dataclasses import dataclass

from cardaudit.extract.model_names import AUDITED, PAGE


@dataclass(frozen=True)
class Subject:
    """What a block is about: ``about`` is "audited", "page" or another model's name;
    ``inherited`` marks the original card a converted repo carries; ``reported`` marks
    figures the text attributes to someone else ("according to the Qwen team")."""

    about: str = PAGE
    inherited: bool = False
    reported: bool = False

    @property
    def charged(self) -> bool:
        """Whether a finding may charge the audited model with this block."""
        return self.about in (AUDITED, PAGE) and not self.reported


PAGE_SUBJECT = Subject()
