"""Self-Ask and S given the data's own decomposition: the ceiling of a perfect decomposer, and whether S's
reading machinery leads Self-Ask's once the follow-ups are right.

Usage::

    python -m benchmarks.bench_oracle_plan --index INDEX_DIR [--data DIR] [--limit 60]
        [--work DIR (default: the temporary folder's oracle-plan)] [--out benchmarks/results/oracle-plan/results.json]

Both graphs run with ``decomposition=plan``, whose one planning call is replaced by the data's steps
(:func:`gold_plan`): MuSiQue's sub-questions ("Who wrote The Canon of Medicine?", "Where did #1 think
Venus was ...?"; a knowledge-base step "X >> spouse" as "Who is the spouse of X?"), 2Wiki's evidence
triples as questions ("Who is the director of Ronnie Rocket?", "Where was #1 born?"). "#k" is filled
with the k-th hop's answer, as a plan's is; everything else (retrieval, each hop's reading, S's samples,
judge and MER, Self-Ask's final step) is the graph's own on the embedded 1.5B, the ``cpu`` profile. The
first ``--limit`` development questions (dev 1-100's order), both graphs in one ``sunar eval``.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import add_data_argument, data_dir
from sunar.evals.metrics import paired_comparison
from sunar.evals.predictions import latest, read_predictions

VARIANTS = ("self_ask+decomposition=plan+calibration=off", "sunar+decomposition=plan+calibration=off")
#: 2Wiki's relations (and MuSiQue's "X >> relation" steps) as questions; any other: "What is the R of X?".
ASKED = {"place of birth": "Where was {} born?", "place of death": "Where did {} die?", "date of birth": "When was {} born?",
         "date of death": "When did {} die?", "place of burial": "Where was {} buried?", "educated at": "Where was {} educated?",
         "cause of death": "Why did {} die?", "inception": "When was {} founded?", "country of citizenship": "What is the nationality of {}?",
         "located in the administrative territorial entity": "In which administrative territorial entity is {} located?"}
PEOPLE = {"director", "father", "mother", "spouse", "composer", "performer", "cast member", "child", "sibling", "producer",
          "screenwriter", "founded by", "author", "creator", "employer", "publisher", "member of sports team", "owned by"}


def asked(relation: str, subject: str) -> str:
    """One step, ``relation`` of ``subject``, as a question."""
    relation, subject = relation.strip(), subject.strip()
    if relation in ASKED:
        return ASKED[relation].format(subject)
    return f"{'Who' if relation in PEOPLE else 'What'} is the {relation} of {subject}?"


def gold_plan(row: dict[str, Any]) -> list[str]:
    """The data's steps of a dev question as a plan: questions, "#k" for the k-th step's answer."""
    if row.get("decomposition"):
        steps = [s["question"] for s in row["decomposition"]]
        return [asked(*reversed(s.split(">>", 1))) if ">>" in s else s for s in steps]
    triples = row["evidence_triples"]
    return [asked(t[1], t[0] if i == 0 else f"#{i}") for i, t in enumerate(triples)]


def run(rows: list[dict[str, Any]], index: str, data: Path, work: Path) -> list[dict[str, Any]]:
    """Both graphs on ``rows`` (the first of dev.jsonl in an eval's order) with the data's plans, in one
    eval into ``work`` (resumed if it is there, and taken further with more rows)."""
    import sunar.nodes.decompose as decompose
    from sunar.cli import main as sunar_cli

    plans = {r["question"]: gold_plan(r) for r in rows}
    decompose.ask_plan = lambda question, demos, cfg, config: ([re.sub(r"\s+", " ", s).strip() for s in plans[question]], ["the data's plan"], "")
    code = sunar_cli(["eval", "--questions", str(data / "dev.jsonl"), "--limit", str(len(rows)), "--corpus", str(data / "corpus.jsonl"), "--index", index, "--variants", ",".join(VARIANTS),
                      "--out", str(work), "--llm", "embedded:qwen2.5-1.5b", "--profile", "cpu", "--quiet"])
    if code:
        raise SystemExit(code)
    wanted = {r["id"] for r in rows}
    return [r for r in latest(read_predictions(work / "predictions.jsonl")).values() if r["id"] in wanted]


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per graph, right answers (cover-EM and EM) by dataset; S against Self-Ask question by question;
    recorded seconds per question and their ratio."""
    by = {v: sorted((r for r in records if r["variant"] == v and not r.get("error")), key=lambda r: r["id"]) for v in VARIANTS}
    sa, s = (by[v] for v in VARIANTS)
    out: dict[str, Any] = {"questions": len(s)}
    for name, rs in (("Self-Ask", sa), ("S", s)):
        out[name] = {m: {"all": sum(r["metrics"][k] for r in rs), **{d: sum(r["metrics"][k] for r in rs if r["dataset"] == d) for d in ("musique", "2wiki")}}
                     for m, k in (("cover-EM", "cover_em"), ("EM", "em"))}
        out[name]["recorded s / question"] = round(sum(r["time"]["total"] for r in rs) / max(len(rs), 1), 1)
    for m, k in (("cover-EM", "cover_em"), ("EM", "em")):
        out[f"S against Self-Ask, {m}"] = paired_comparison([r["metrics"][k] for r in s], [r["metrics"][k] for r in sa])
    out["time ratio"] = round(out["S"]["recorded s / question"] / max(out["Self-Ask"]["recorded s / question"], 1e-9), 2)
    return out


def main(argv: list[str] | None = None) -> None:
    from sunar.evals.data import read_questions
    from sunar.evals.run import interleave

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--index", required=True, help="index directory of the corpus (sunar index)")
    add_data_argument(p)
    p.add_argument("--limit", type=int, default=60, help="the first this many development questions (dev 1-100's order)")
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "oracle-plan", help="the eval's folder (resumable)")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/oracle-plan/results.json"))
    args = p.parse_args(argv)
    data = data_dir(args.data)
    if not 0 < args.limit <= 100:
        raise SystemExit("--limit: 1 to 100 (development questions only)")
    by_id = {r["id"]: r for r in (json.loads(line) for line in (data / "dev.jsonl").read_text().splitlines() if line.strip())}
    rows = [by_id[q.id] for q in interleave(read_questions(str(data / "dev.jsonl")))[: args.limit]]
    records = run(rows, args.index, data, args.work)
    result = {"questions": [r["id"] for r in rows], "plans": {r["id"]: gold_plan(r) for r in rows}, "summary": summary(records),
              "answers": {f"{r['id']} {r['variant'].split('+')[0]}": [r["answer"], r["metrics"]["cover_em"], r["metrics"]["em"]] for r in records}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(result["summary"], indent=1))


if __name__ == "__main__":
    main()
