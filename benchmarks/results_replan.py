"""Tables of the second decomposition (``replan_below``, :mod:`sunar.replan`): a planned chain beside
S's own and who chooses between them, the threshold composed from two runs, and what the switch did
where it ran in one."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks.results_render import table, versus
from benchmarks.results_runs import Records, noted, of, recorded_seconds, scores
from sunar.evals.metrics import cover_em, exact_match, paired_comparison
from sunar.trust import oriented


def second_chain_table(columns: Sequence[tuple[str, Records, Records]], signals: Sequence[str]) -> str:
    """A second chain beside S's own, and how well each chooser takes between them. Per column (label,
    S's own answers, the second chain's, the same questions): the right answers of each, of the right
    one of the two (a perfect chooser), then of the one with the higher calibrated probability shown or
    recorded signal (oriented so that higher means more trust; a tie or a missing value keeps S's own), with
    how many the chooser took from the second chain; "-" where a side of the column records none."""
    Key = Callable[[dict[str, Any]], float | None]

    def signal(name: str) -> Key:
        return lambda r: oriented(name, (r.get("signals") or {}).get(name))

    def recorded(key: Key, column: tuple[str, Records, Records]) -> bool:
        return all(any(key(r) is not None for r in side) for side in column[1:])

    keys: list[tuple[str, Key]] = [("the higher probability shown", lambda r: r.get("confidence") if r.get("trust") is not None else None),
                                   *((f"the higher `{name}`", signal(name)) for name in signals)]
    keys = [(label, key) for label, key in keys if any(recorded(key, column) for column in columns)]
    body: list[list[Any]] = [["S's own chain"], ["the second chain"], ["the right one of the two"], *([label] for label, _ in keys)]
    for column in columns:
        other = {r["id"]: r for r in column[2]}
        pairs = [(r, other[r["id"]]) for r in column[1] if r["id"] in other]
        right = [(bool(scores(a)["cover_em"]), bool(scores(b)["cover_em"])) for a, b in pairs]
        body[0].append(f"{sum(x for x, _ in right)} (0 taken)")
        body[1].append(f"{sum(y for _, y in right)} ({len(pairs)} taken)")
        body[2].append(f"{sum(x or y for x, y in right)} of {len(pairs)}")
        for row, (_, key) in zip(body[3:], keys, strict=True):
            if not recorded(key, column):
                row.append("-")
                continue
            taken = [(x := key(a)) is not None and (y := key(b)) is not None and y > x for a, b in pairs]
            row.append(f"{sum(y if t else x for t, (x, y) in zip(taken, right, strict=True))} ({sum(taken)} taken)")
    return table(["chooser", *(label for label, _, _ in columns)], body)


def link(record: dict[str, Any]) -> float | None:
    """An answer's weakest link as the check recorded it (``chain_support``; None: not judged)."""
    return (record.get("signals") or {}).get("chain_support")


def composed(own: Records, planned: Records, below: float) -> tuple[Records, set[str], set[str]]:
    """``replan_below`` at ``below`` composed from two runs of the same questions, as :mod:`sunar.replan`
    decides (an unjudged answer is not weak, an unjudged planned one not taken): the answers (S's own,
    or the planned chain's where taken), and the ids where the planned chain was asked and where its
    answer was taken. Only questions both runs answered count."""
    second = {r["id"]: r for r in planned}
    mine = [r for r in own if r["id"] in second]
    asked = {r["id"] for r in mine if (x := link(r)) is not None and x < below}
    taken = {r["id"] for r in mine if r["id"] in asked and (y := link(second[r["id"]])) is not None and y > link(r)}
    return [second[r["id"]] if r["id"] in taken else r for r in mine], asked, taken


def replan_table(own: Records, planned: Records, base: Records, below: Sequence[float]) -> str:
    """``replan_below`` composed from two runs of the same questions (:func:`composed`): S's own answers
    (``own``), the planned chain's (``planned``) and Self-Ask's (``base``). Per threshold: how often the
    planned chain is asked and its answer taken; the answers then, against S's and Self-Ask's."""
    theirs = {r["id"]: r for r in base}
    mine = {r["id"]: r for r in own if r["id"] in theirs}
    body = []
    for t in below:
        answers, asked, taken = composed(list(mine.values()), planned, t)
        cover = [scores(r)["cover_em"] for r in answers]
        vs_s = paired_comparison(cover, [scores(mine[r["id"]])["cover_em"] for r in answers])
        vs_sa = paired_comparison(cover, [scores(theirs[r["id"]])["cover_em"] for r in answers])
        em_sa = paired_comparison([scores(r)["em"] for r in answers], [scores(theirs[r["id"]])["em"] for r in answers])
        body.append([f"{t:.2f}", f"{len(asked)} of {len(answers)}", len(taken), f"{sum(cover):.0f}", f"{sum(scores(r)['em'] for r in answers):.0f}",
                     f"{vs_s['wins']} / {vs_s['losses']}", versus(vs_sa), versus(em_sa)])
    return table(["replan_below", "planned chain asked", "its answer taken", "right (cover-EM)", "EM", "right / wrong where S was not",
                  "right / wrong where Self-Ask was not (sign test p)", "the same, EM"], body)


#: How the check's notes settle a second decomposition (:func:`sunar.replan.replanned`).
ASKED = "is decomposed again, planned at once"
SETTLED = re.compile(r"^(took the planned chain's answer|kept the first answer): (.*) \(weakest link \S+\) against the planned chain's (.*) \(\S+\)$")


def settled(record: dict[str, Any]) -> tuple[str, str, bool] | None:
    """(the first answer, the planned chain's, whether the planned one was taken) from a record's notes;
    None where no second decomposition was settled."""
    for note in record.get("notes") or []:
        if m := SETTLED.match(note):
            first, planned = (ast.literal_eval(g) or "" for g in m.group(2, 3))
            return first, planned, m.group(1).startswith("took")
    return None


def replan_acted_table(rows: Sequence[tuple[str, Records, str]]) -> str:
    """What ``replan_below`` did where it ran: per row (label, a run's records, the variant), the answers
    of the variant, those where the planned chain was asked and settled, those where it gave the first
    answer again, those where its answer was taken, and the taken answers right / wrong where the
    first answer was not (cover-EM, then EM), each first answer scored against the same gold answers."""
    body = []
    for label, records, variant in rows:
        answers = of(records, variant)
        asked = [r for r in answers if noted(r, ASKED)]
        done = [(r, s) for r in asked if (s := settled(r))]
        taken = [(r, first) for r, (first, _, took) in done if took]
        cells = []
        for name, metric in (("cover_em", cover_em), ("em", exact_match)):
            compared = paired_comparison([scores(r)[name] for r, _ in taken], [metric(first, r["gold"]) for r, first in taken])
            cells.append(f"{compared['wins']} / {compared['losses']}")
        body.append([label, len(answers), len(asked), sum(1 for _, (a, b, _) in done if a == b), len(taken), *cells])
    return table(["questions", "answers", "planned chain asked", "it gave the first answer again", "its answer taken",
                  "taken: right / wrong where the first answer was not", "the same, EM"], body)


def time_without_table(records: Records, base: str, variant: str, node: str, why: str) -> str:
    """Recorded seconds per question of ``base`` and ``variant`` in one run, and of ``variant`` without
    the wall seconds of one ``node`` (``why`` says what they were spent on)."""
    def seconds(r: dict[str, Any], less: str = "") -> float:
        return recorded_seconds(r) - float((r.get("node_seconds") or {}).get(less, 0.0))

    def mean_of(variant: str, less: str = "") -> float:
        answered = [r for r in of(records, variant) if not r.get("error")]
        return sum(seconds(r, less) for r in answered) / (len(answered) or 1)

    b = mean_of(base)
    rows = [(f"`{base}`", b), (f"`{variant}`", mean_of(variant)), (f"`{variant}` without `{node}` ({why})", mean_of(variant, node))]
    return table(["graph", "recorded s / question", f"vs `{base}`"], [[label, f"{s:.1f}", f"{s / b:.2f}x"] for label, s in rows])


#: How answer_hop's notes say a planned hop gave the first answer's weakest link again (:func:`sunar.replan.avoided`).
AVOIDED, NAMED = "is the first answer's weakest link: read again without it", "read again without it, they name "


def avoid_table(rows: Sequence[tuple[str, Records, str]]) -> str:
    """What ``replan_avoid`` did: per row (label, a run's records, the variant), the answers, those where the
    planned chain was asked, where a planned hop gave the first answer's weakest link again, where its pages,
    read again without it, named another answer, and where the planned chain's answer was taken."""
    body = []
    for label, records, variant in rows:
        answers = of(records, variant)
        taken = sum(bool((s := settled(r)) and s[2]) for r in answers)
        body.append([label, len(answers), *(sum(noted(r, text) for r in answers) for text in (ASKED, AVOIDED, NAMED)), taken])
    return table(["run", "answers", "planned chain asked", "a planned hop gave the first answer's weakest link",
                  "its pages named another answer", "the planned chain's answer taken"], body)
