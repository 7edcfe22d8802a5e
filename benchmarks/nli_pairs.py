"""A labelled set of answer pairs for measuring the semantic-set judge (does answer a mean answer b?).

The pairs are built at run time from a multi-hop dev file (``dev.jsonl`` with ``question``,
``answers`` = gold answer first then aliases, and ``decomposition`` for MuSiQue); no data is copied
into the repository. Construction is deterministic (fixed seed, stable ordering).

"same" pairs (both answers name the same thing):
  ``alias``        the gold answer and an alias of it that differs after normalisation; the dataset
                   aliases are noisy, so an alias is kept only when a conservative rule says it names
                   the same thing (same word set up to accents, hyphens, abbreviations and possessives;
                   a fuller or shorter form that only drops capitalised name parts; an acronym)
  ``paraphrase``   a rule-made rewording of the gold answer ("in X", "It was X.", "on X", a date
                   written the other way round)
  ``qualifier``    the gold answer without its trailing ", Region" qualifier ("Austin, Texas" vs "Austin")

"different" pairs (both answers name different things), asked with the first answer's question:
  ``sub-answer``   the gold answer vs the answer of the question's first hop (MuSiQue), the classic
                   multi-hop confusion ("Jamie Murray" vs "Andy Murray")
  ``shared-word``  the gold answers of two questions with the same answer type that share a word
  ``type-mate``    the gold answers of two questions with the same answer type (both years, both
                   people, both places, ...)
  ``near-miss``    a year or date one unit off the gold one ("1848" vs "1849")
"""

from __future__ import annotations

import json
import random
import re
import unicodedata
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sunar.text import normalize_answer

SEED = 20240611

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
STOPWORDS = frozenset({"a", "an", "the", "of", "in", "at", "on", "and", "s", "to", "for"})
ABBREVIATIONS = {"st": "saint", "mt": "mount", "ft": "fort", "jr": "junior", "sr": "senior"}
HONORIFICS = frozenset({"mr", "mrs", "ms", "dr", "sir", "lord", "lady", "dame"})
_DAY_MONTH_YEAR = re.compile(r"^(\d{1,2}) ([A-Z][a-z]+) (\d{3,4})$")
_MONTH_DAY_YEAR = re.compile(r"^([A-Z][a-z]+) (\d{1,2}), (\d{3,4})$")
_YEAR = re.compile(r"^\d{3,4}$")


@dataclass(frozen=True)
class Pair:
    """Two answers to one question and whether they mean the same.

    Attributes:
        question: The question both answers answer.
        a: The first answer.
        b: The second answer.
        same: True when the answers name the same thing (one semantic set).
        kind: How the pair was made (see the module docstring).
        qid: Id of the dev record the question comes from (for splitting by question).
    """

    question: str
    a: str
    b: str
    same: bool
    kind: str
    qid: str


@dataclass(frozen=True)
class _Record:
    qid: str
    question: str
    gold: str
    aliases: tuple[str, ...]
    sub_answers: tuple[str, ...]
    kind: str


def fold(text: str) -> str:
    """Lower case without accents (``München`` -> ``munchen``).

    Args:
        text: Any text.

    Returns:
        The text in lower case with combining marks removed.
    """
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()


def words(text: str) -> list[str]:
    """Content words of an answer: folded, split on anything not a letter or digit, possessive
    ``'s`` and stopwords dropped, common abbreviations and honorifics resolved/dropped.

    Args:
        text: An answer.

    Returns:
        The answer's content words, in order.
    """
    out = []
    for token in re.split(r"[^0-9a-z]+", fold(text)):
        if not token or token in STOPWORDS or token in HONORIFICS:
            continue
        out.append(ABBREVIATIONS.get(token, token))
    return out


def _capitalised_words(text: str) -> set[str]:
    """Folded content words that start with a capital letter (or digit) in ``text``."""
    caps = set()
    for token in re.split(r"[^\w]+", text):
        if token and (token[0].isupper() or token[0].isdigit()):
            caps.update(words(token))
    return caps


def _acronym(short: str, long: str) -> bool:
    """True when ``short`` is written in capitals and spells the initials of ``long``'s words."""
    letters = re.sub(r"[^A-Za-z]", "", short)
    if len(letters) < 2 or not short.isupper():
        return False
    initials = "".join(w[0] for w in re.split(r"[^\w]+", long) if w and w[0].isupper())
    return letters == initials


def same_by_rule(gold: str, alias: str, person: bool = True) -> bool:
    """Conservative rule: does ``alias`` name the same thing as ``gold``?

    Kept: the same content words (accents, hyphens, ``St``/``Saint``, possessives and honorifics
    aside); a shorter or fuller form whose extra words are all capitalised name parts, whose longer
    side has at most five words and, unless the answers are people's names, which keeps at least as
    many words as it drops (so "Brooklyn" is not taken for "Brooklyn Nets NBA"); an acronym of the
    gold answer; the same surname with one first name a prefix of the other (``Chris Pérez`` /
    ``Christopher Perez``).

    Args:
        gold: The gold answer.
        alias: A candidate alias of it.
        person: Whether the answers are people's names (a surname alone then names the person).

    Returns:
        Whether the pair can be labelled "same" with confidence.
    """
    wg, wa = words(gold), words(alias)
    if not wg or not wa:
        return False
    sg, sa = set(wg), set(wa)
    if sg == sa:
        return True
    if _acronym(alias, gold) or _acronym(gold, alias):
        return True
    small, big, big_text = (sa, sg, gold) if sa < sg else (sg, sa, alias) if sg < sa else (None, None, "")
    if small is not None and big is not None and len(big) <= 5:
        extra = big - small
        return extra <= _capitalised_words(big_text) and (person or len(extra) <= len(small))
    if len(wg) == len(wa) == 2 and wg[1] == wa[1] and alias[:1].isupper() and gold[:1].isupper():
        first_g, first_a = wg[0], wa[0]
        return first_g.startswith(first_a) or first_a.startswith(first_g)
    return False


def related(x: str, y: str) -> bool:
    """True when two answers might name the same or overlapping things (not a clean "different").

    Args:
        x: An answer.
        y: Another answer.

    Returns:
        Whether the pair is too close to be labelled "different" (equal after normalisation,
        same by rule, or one's word set contains the other's).
    """
    if normalize_answer(x) == normalize_answer(y) or same_by_rule(x, y):
        return True
    sx, sy = set(words(x)), set(words(y))
    return not sx or not sy or sx <= sy or sy <= sx


def answer_type(question: str, gold: str) -> str:
    """A coarse answer type from the answer's shape and the question's wording.

    Args:
        question: The question.
        gold: Its gold answer.

    Returns:
        One of ``year``, ``date``, ``number``, ``person``, ``place``, ``country``, ``thing``.
    """
    folded = fold(gold)
    if _YEAR.match(gold.strip()):
        return "year"
    if any(ch.isdigit() for ch in gold) and any(month in folded for month in MONTHS):
        return "date"
    if gold[:1].isdigit():
        return "number"
    q = question.lower()
    if "nationality" in q or "which country" in q:
        return "country"
    if not gold[:1].isupper():
        return "thing"
    if q.startswith("where") or "place of" in q:
        return "place"
    if q.startswith("who") or any(w in q for w in (" spouse", " father", " mother", " wife", " husband", " child")):
        return "person"
    return "thing"


def paraphrases(gold: str, kind: str) -> list[str]:
    """Rule-made rewordings of a gold answer that keep its meaning.

    Args:
        gold: The gold answer.
        kind: Its answer type (see :func:`answer_type`).

    Returns:
        Candidate paraphrases, most specific first; none equals ``gold`` after normalisation.
    """
    out: list[str] = []
    if len(words(gold)) > 5 or not (gold[:1].isupper() or gold[:1].isdigit()):
        return out  # a descriptive answer: a template would not read as the same answer
    if kind == "date":
        if m := _DAY_MONTH_YEAR.match(gold):
            out.append(f"{m.group(2)} {int(m.group(1))}, {m.group(3)}")
        elif m := _MONTH_DAY_YEAR.match(gold):
            out.append(f"{int(m.group(2))} {m.group(1)} {m.group(3)}")
        out.append(f"on {gold}" if re.match(r"^\d|.*\d,", gold) else f"in {gold}")
    elif kind == "year":
        out += [f"in {gold}", f"in the year {gold}"]
    elif kind in ("place", "country"):
        institution = any(w in fold(gold) for w in ("college", "university", "academy", "school", "institute"))
        out += [f"{'at' if institution else 'in'} {gold}", f"The answer is {gold}."]
    elif kind == "person":
        out += [f"It was {gold}.", f"The answer is {gold}."]
    else:
        out += [f"The answer is {gold}."]
    return [p for p in out if normalize_answer(p) != normalize_answer(gold)]


def drop_qualifier(gold: str) -> str | None:
    """``"Austin, Texas"`` -> ``"Austin"``; None when the answer has no such qualifier.

    Args:
        gold: The gold answer.

    Returns:
        The part before the last ``", "`` when both parts are capitalised words, else None.
    """
    head, sep, tail = gold.rpartition(", ")
    if not sep or any(ch.isdigit() for ch in gold) or not head[:1].isupper() or not tail[:1].isupper():
        return None
    return head


def near_miss(gold: str) -> str | None:
    """A year or date one unit off (``1848`` -> ``1849``, ``2 May 1934`` -> ``3 May 1934``).

    Args:
        gold: The gold answer.

    Returns:
        The altered answer, or None when the answer is not a plain year or date.
    """
    if _YEAR.match(gold):
        return str(int(gold) + 1)
    if m := _DAY_MONTH_YEAR.match(gold):
        day = int(m.group(1))
        return f"{day + 1 if day < 28 else day - 1} {m.group(2)} {m.group(3)}"
    if m := _MONTH_DAY_YEAR.match(gold):
        day = int(m.group(2))
        return f"{m.group(1)} {day + 1 if day < 28 else day - 1}, {m.group(3)}"
    return None


def read_records(path: str | Path) -> list[_Record]:
    """Read the dev file, one record per distinct question text (duplicates dropped).

    Args:
        path: A ``dev.jsonl`` file.

    Returns:
        The records in file order.
    """
    records: list[_Record] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            answers = [a.strip() for a in row.get("answers", []) if a and a.strip()]
            if not answers or row["question"] in seen:
                continue
            seen.add(row["question"])
            hops = [d.get("answer", "").strip() for d in (row.get("decomposition") or [])[:-1]]
            records.append(
                _Record(
                    qid=str(row.get("id", len(records))),
                    question=row["question"].strip(),
                    gold=answers[0],
                    aliases=tuple(answers[1:]),
                    sub_answers=tuple(h for h in hops if h),
                    kind=answer_type(row["question"], answers[0]),
                )
            )
    return records


def _ordered(rng: random.Random, question: str, x: str, y: str, same: bool, kind: str, qid: str) -> Pair:
    """A pair with its two answers in random order."""
    if rng.random() < 0.5:
        x, y = y, x
    return Pair(question=question, a=x, b=y, same=same, kind=kind, qid=qid)


def _same_pairs(records: Sequence[_Record], rng: random.Random) -> dict[str, list[Pair]]:
    by_kind: dict[str, list[Pair]] = {"alias": [], "qualifier": [], "paraphrase": []}
    seen_gold: set[str] = set()
    for r in records:
        key = normalize_answer(r.gold)
        aliases = [a for a in r.aliases if normalize_answer(a) != key and same_by_rule(r.gold, a, r.kind == "person")]
        aliases = list(dict.fromkeys(aliases))
        # at most two aliases per question, so one long alias list does not dominate
        for alias in rng.sample(aliases, min(2, len(aliases))):
            by_kind["alias"].append(_ordered(rng, r.question, r.gold, alias, True, "alias", r.qid))
        if key in seen_gold:
            continue  # the same gold answer again: one paraphrase pair per answer is enough
        seen_gold.add(key)
        head = drop_qualifier(r.gold)
        if (
            head
            and r.kind in ("place", "person")
            and normalize_answer(head) not in {normalize_answer(a) for a in r.aliases}
        ):
            by_kind["qualifier"].append(_ordered(rng, r.question, r.gold, head, True, "qualifier", r.qid))
        options = paraphrases(r.gold, r.kind)
        if options:
            by_kind["paraphrase"].append(
                _ordered(rng, r.question, r.gold, rng.choice(options), True, "paraphrase", r.qid)
            )
    return by_kind


def _different_pairs(records: Sequence[_Record], rng: random.Random) -> dict[str, list[Pair]]:
    by_kind: dict[str, list[Pair]] = {"sub-answer": [], "shared-word": [], "type-mate": [], "near-miss": []}

    def clean(x: str, r: _Record) -> bool:
        return not any(related(x, y) for y in (r.gold, *r.aliases))

    seen_q: set[tuple[str, str]] = set()
    for r in records:
        for hop in r.sub_answers:
            if clean(hop, r) and (r.question, normalize_answer(hop)) not in seen_q:
                seen_q.add((r.question, normalize_answer(hop)))
                by_kind["sub-answer"].append(_ordered(rng, r.question, r.gold, hop, False, "sub-answer", r.qid))
        miss = near_miss(r.gold)
        if miss and clean(miss, r):
            by_kind["near-miss"].append(_ordered(rng, r.question, r.gold, miss, False, "near-miss", r.qid))
        if r.kind == "thing":
            continue  # no answer type to match
        mates = [o for o in records if o.kind == r.kind and o.qid != r.qid and clean(o.gold, r)]
        if not mates:
            continue
        sharing = [o for o in mates if set(words(o.gold)) & set(words(r.gold))]
        if sharing:
            other = rng.choice(sharing)
            by_kind["shared-word"].append(_ordered(rng, r.question, r.gold, other.gold, False, "shared-word", r.qid))
        else:
            other = rng.choice(mates)
            by_kind["type-mate"].append(_ordered(rng, r.question, r.gold, other.gold, False, "type-mate", r.qid))
    return by_kind


def _take(rng: random.Random, groups: dict[str, list[Pair]], total: int, caps: dict[str, int]) -> list[Pair]:
    """Up to ``total`` pairs: each kind up to its cap first, the rest filled at random from what is
    left. A pair of answers already taken (in either order, after normalisation) is not taken again."""
    seen: set[frozenset[str]] = set()
    pools: dict[str, list[Pair]] = {}
    for kind, pairs in groups.items():
        pool = []
        for pair in pairs:
            key = frozenset((normalize_answer(pair.a), normalize_answer(pair.b)))
            if key not in seen:
                seen.add(key)
                pool.append(pair)
        rng.shuffle(pool)
        pools[kind] = pool
    chosen: list[Pair] = []
    leftovers: list[Pair] = []
    for kind, pool in pools.items():
        cap = caps.get(kind, 0)
        chosen += pool[:cap]
        leftovers += pool[cap:]
    rng.shuffle(leftovers)
    chosen += leftovers[: max(0, total - len(chosen))]
    return chosen[:total]


def build_pairs(path: str | Path, per_class: int = 80, seed: int = SEED) -> list[Pair]:
    """Build the labelled pair set, balanced between "same" and "different".

    Args:
        path: The multi-hop dev file (``dev.jsonl`` of the data folder).
        per_class: Number of pairs of each label (fewer when the file cannot give that many).
        seed: Seed of the random choices; the same seed and file give the same pairs.

    Returns:
        The pairs, shuffled, ``per_class`` "same" and ``per_class`` "different" ones at most.
    """
    rng = random.Random(seed)
    records = read_records(path)
    same = _same_pairs(records, rng)
    different = _different_pairs(records, rng)
    n = min(per_class, sum(map(len, same.values())), sum(map(len, different.values())))
    same_caps = {"alias": n * 3 // 8, "qualifier": n // 5, "paraphrase": n * 3 // 8}
    different_caps = {"sub-answer": n * 3 // 8, "shared-word": n // 4, "near-miss": n // 8, "type-mate": n // 4}
    pairs = _take(rng, same, n, same_caps) + _take(rng, different, n, different_caps)
    rng.shuffle(pairs)
    return pairs


def split_by_question(pairs: Iterable[Pair]) -> tuple[list[Pair], list[Pair]]:
    """Two halves of the pairs, every question's pairs in one half (stable, by a hash of the id).

    Args:
        pairs: The pairs.

    Returns:
        (half A, half B).
    """
    a: list[Pair] = []
    b: list[Pair] = []
    for pair in pairs:
        (a if zlib.crc32(pair.qid.encode()) % 2 == 0 else b).append(pair)
    return a, b


def main(argv: Sequence[str] | None = None) -> None:
    """Print the pair set (``python -m benchmarks.nli_pairs [--data DIR] [dev.jsonl]``)."""
    import argparse
    from collections import Counter

    from benchmarks import add_data_argument, data_dir

    parser = argparse.ArgumentParser(prog="python -m benchmarks.nli_pairs", description="Print the labelled answer pairs.")
    add_data_argument(parser)
    parser.add_argument("dev", nargs="?", type=Path, default=None, help="a dev file (default: DIR/dev.jsonl)")
    args = parser.parse_args(argv)
    pairs = build_pairs(args.dev or data_dir(args.data) / "dev.jsonl")
    for p in pairs:
        print(f"{'SAME' if p.same else 'DIFF'} {p.kind:12} {p.a!r} | {p.b!r} || {p.question}")
    print(Counter((p.same, p.kind) for p in pairs))
    half_a, half_b = split_by_question(pairs)
    print(f"{len(pairs)} pairs; halves {len(half_a)} / {len(half_b)}")


if __name__ == "__main__":
    main()
