"""How far S would get with a perfect reader on the first hops its uncertainty marks: the ceiling of
the next design (a stronger reader where S doubts), measured with the data's own first step.

Usage::

    python -m benchmarks.bench_oracle_bridge SUBSET.jsonl --cache evals/results/RUN/llm-cache.sqlite --index INDEX_DIR
        [--data DIR] [--hops flagged|all] [--work DIR (default: the temporary folder's oracle-bridge)]
        [--out benchmarks/results/oracle-bridge/results.json]

``hop_support=spans_first`` acts on a chain's first hop where S's triggers mark it (the judge doubts it, or
its samples split). Here what it takes is not the best-judged span but the data's first step (MuSiQue's
first sub-answer, 2Wiki's first triple's object): an oracle, where a hop's answer does not already agree
with it. The rest of the graph is S's own, the embedded 1.5B: the chain goes on from the oracle's bridge,
MER answers, the judge checks. So the figure is how many questions a perfect first-hop reader on S's
marked hops would turn right, and how many the steps after the bridge still lose. ``--hops all`` puts
the oracle on every first hop (a perfect first-hop reader everywhere). S and the oracle run in one
``sunar eval`` of the SUBSET (``benchmarks/subsets.py spans_first`` lists the questions whose first hop S
marks) from a copy of ``--cache``, so S replays its calls. For development questions only (dev 1-100).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import add_data_argument, data_dir
from benchmarks.bench_focus import first_steps
from sunar.evals.metrics import paired_comparison
from sunar.evals.predictions import latest, read_predictions
from sunar.signals import agrees

#: The variant the oracle stands in for (its calibration off: no calibration is fitted for it, and the
#: confidence step's samples change no answer).
ORACLE = "sunar+hop_support=spans_first+calibration=off"


class Oracle:
    """The data's first step for the question being answered, put in a marked first hop's place."""

    def __init__(self, gold: dict[str, str], ids: dict[str, str]):
        self.gold, self.ids, self.current = gold, ids, ""

    def judge_spans(self, hop: dict[str, Any], read: list, llm: Any) -> dict[str, Any]:
        """In place of :func:`sunar.hop_support.judge_spans`: the hop with the data's first step as its answer."""
        bridge = self.gold[self.current]
        if agrees(str(hop["answer"]), bridge):
            return hop
        return {**hop, "answer": bridge, "support": 1.0, "unsupported": hop["answer"], "spans_judged": 0}

    def watching(self, graph: Any) -> Any:
        """``graph`` whose runs first note which question they answer."""
        oracle = self

        class Watched:
            def invoke(self, given: dict[str, Any], config: Any = None, **kw: Any) -> Any:
                oracle.current = oracle.ids[given["question"]]
                return graph.invoke(given, config, **kw)

        return Watched()


def run(subset: Path, cache: Path, index: str, data: Path, work: Path, every: bool) -> list[dict[str, Any]]:
    """S and the oracle variant on ``subset``, in one eval into ``work`` (resumed if it is there)."""
    import sunar.graph
    import sunar.hop_support as hop_support
    from sunar.cli import main as sunar_cli
    from sunar.evals.data import read_questions

    oracle = Oracle(first_steps(data / "dev.jsonl"), {q.question: q.id for q in read_questions(subset)})
    work.mkdir(parents=True, exist_ok=True)
    if not (work / "llm-cache.sqlite").exists():
        shutil.copy(cache, work / "llm-cache.sqlite")
    build = sunar.graph.build_graph
    hop_support.judge_spans = oracle.judge_spans
    if every:
        hop_support.escalating = lambda hop, judged, cfg: True
    sunar.graph.build_graph = lambda name: oracle.watching(build(name))
    code = sunar_cli(["eval", "--questions", str(subset), "--corpus", str(data / "corpus.jsonl"), "--index", index, "--variants", f"sunar,{ORACLE}",
                  "--out", str(work), "--llm", "embedded:qwen2.5-1.5b", "--profile", "cpu", "--quiet"])
    if code:
        raise SystemExit(code)
    return list(latest(read_predictions(work / "predictions.jsonl")).values())


def rows_of(records: list[dict[str, Any]], gold: dict[str, str]) -> list[dict[str, Any]]:
    """Per question: S's and the oracle's first hop, answer and scores."""
    by: dict[str, dict[str, Any]] = {}
    for r in records:
        by.setdefault(r["id"], {})["oracle" if r["variant"] == ORACLE else "s"] = r
    rows = []
    for qid, pair in by.items():
        s, o = pair["s"], pair["oracle"]
        first = [(r.get("reasoning_path") or [{}])[0] for r in (s, o)]
        rows.append({"id": qid, "question": s["question"], "gold": s["gold"][0], "first step": gold[qid],
                     "S first hop": first[0].get("answer", ""), "oracle first hop": first[1].get("answer", ""),
                     "oracle acted": bool(first[1].get("unsupported")), "oracle hops": len(o.get("reasoning_path") or []),
                     "S": s["answer"], "oracle": o["answer"],
                     "S cover-EM": s["metrics"]["cover_em"], "oracle cover-EM": o["metrics"]["cover_em"],
                     "S EM": s["metrics"]["em"], "oracle EM": o["metrics"]["em"]})
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"questions": len(rows), "first bridges put in place": sum(r["oracle acted"] for r in rows)}
    for metric in ("cover-EM", "EM"):
        s, o = [r[f"S {metric}"] for r in rows], [r[f"oracle {metric}"] for r in rows]
        out[metric] = {"S": sum(s), "oracle": sum(o), **paired_comparison(o, s)}
    acted = [r for r in rows if r["oracle acted"]]
    went_on = [r for r in acted if r["oracle hops"] > 1]
    out["where the oracle acted"] = {"ended right": sum(r["oracle cover-EM"] for r in acted),
                                     "the chain asked on from the bridge": len(went_on), "of those, ended right": sum(r["oracle cover-EM"] for r in went_on),
                                     "the chain ended after the first hop": len(acted) - len(went_on)}
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("subset", type=Path, help="the questions (benchmarks/subsets.py spans_first, or any dev 1-100 questions with --hops all)")
    p.add_argument("--cache", type=Path, required=True, help="the LLM call cache S's run of these questions made")
    p.add_argument("--index", required=True, help="index directory of the corpus (sunar index)")
    add_data_argument(p)
    p.add_argument("--hops", choices=("flagged", "all"), default="flagged", help="the first hops S's triggers mark, or every one")
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "oracle-bridge", help="the eval's folder (resumable)")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/oracle-bridge/results.json"))
    args = p.parse_args(argv)
    data = data_dir(args.data)
    records = run(args.subset, args.cache, args.index, data, args.work, args.hops == "all")
    rows = rows_of([r for r in records if not r.get("error")], first_steps(data / "dev.jsonl"))
    result = {"hops": args.hops, "summary": summary(rows), "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(result["summary"], indent=1))


if __name__ == "__main__":
    main()
