"""Promise facts: every promise of the card and the code README once, with all the places
it is stated, its subject, its delivery status and its age.

The documents are read once (:func:`cardaudit.extract.reading.read_evidence`), so every
mention carries the subject of its block; the same promise stated in several places (card
and code README, twice in a file) is one :class:`Promise` whose ``locations`` list them all
(:mod:`cardaudit.extract.promise_identity` decides what is the same).
"""

from __future__ import annotations

from datetime import datetime

from cardaudit.extract.promise_delivery import Context, _links, decide
from cardaudit.extract.promise_identity import Identity, first_seen, identity, same_identity
from cardaudit.extract.promises import Mention, mentions, promise_table
from cardaudit.extract.reading import AUDITED, PAGE, Subject, read_evidence
from cardaudit.model import Evidence, Location, Promise, RepoSnapshot

Stated = tuple[Mention, RepoSnapshot, Subject]


def _group_key(subject: Subject) -> str:
    return "charged" if subject.charged else subject.about


def group_mentions(stated: list[Stated]) -> list[list[Stated]]:
    """Mentions of the same promise (same subject side, same identity), in first-seen order.

    Groups are indexed by subject side and artifact, and exact identities by their words, so
    a long card is not mentions x groups."""
    table = promise_table()
    groups: list[list[Stated]] = []
    exact: dict[tuple[str, Identity], int] = {}
    by_artifact: dict[tuple[str, str], list[tuple[Identity, int]]] = {}
    places: list[set[tuple[str, str, int, str | None]]] = []
    for entry in stated:
        mention, _snapshot, subject = entry
        wanted = identity(mention.artifact, mention.item, mention.text, table)
        key = _group_key(subject)
        index = exact.get((key, wanted))
        if index is None:
            index = next(
                (
                    i
                    for ident, i in by_artifact.get((key, wanted[0]), ())
                    if same_identity(ident, wanted)
                ),
                None,
            )
        place = (mention.repo, mention.path, mention.line, mention.item)
        if index is None:
            exact[(key, wanted)] = len(groups)
            by_artifact.setdefault((key, wanted[0]), []).append((wanted, len(groups)))
            groups.append([entry])
            places.append({place})
        elif place not in places[index]:
            places[index].add(place)
            groups[index].append(entry)
    return groups


def promise_facts(evidence: Evidence, now: datetime | None = None) -> tuple[Promise, ...]:
    """Every promise in the card and the code README, once, with status and age."""
    from cardaudit.clock import audit_now

    table = promise_table()
    readings = read_evidence(evidence)
    stated: list[Stated] = []
    deliveries: list[Mention] = []
    links: list[tuple[str, str, str, int, str]] = []
    for reading, snapshot in readings:
        found, done = mentions(reading.document, table)
        stated += [(mention, snapshot, reading.at(mention.line)) for mention in found]
        deliveries += done
        links += _links(reading.document)
    if not stated:
        return ()
    clock = now or audit_now()
    context = Context(
        tuple(deliveries),
        tuple(links),
        evidence.code,
        tuple(reading.document for reading, _ in readings),
        evidence.repo,
    )
    results = []
    parsed: dict = {}
    for group in group_mentions(stated):
        first, _snapshot, subject = group[0]
        status, reason = decide(first, context, table)
        seen_dates = [
            seen
            for mention, snapshot, _subject in group
            if (seen := first_seen(mention, snapshot.history.get(mention.path, ()), table, parsed))
        ]
        seen = min(seen_dates) if seen_dates else None
        subjects = [s for _, _, s in group]
        about = (
            AUDITED
            if any(s.about == AUDITED for s in subjects)
            else PAGE
            if subject.charged
            else subject.about
        )
        places = list(
            dict.fromkeys(Location(m.path, m.line, repo=m.repo) for m, _snap, _subject in group)
        )
        results.append(
            Promise(
                text=first.text,
                artifact=first.artifact,
                path=first.path,
                line=first.line,
                status=status,  # type: ignore[arg-type]
                first_seen=seen.date().isoformat() if seen else None,
                reason=reason,
                repo=first.repo,
                item=first.item,
                age_days=(clock.date() - seen.date()).days if seen else None,
                locations=tuple(places),
                about=about,
                inherited=all(s.inherited for s in subjects),
            )
        )
    return tuple(results)
