"""Build the shipped pool of worked decompositions (``sunar/data/decompositions.jsonl``) from the
first N dev questions in the order ``sunar eval`` takes them (datasets interleaved), so an eval of
the questions after them (``--skip N``) never sees its own or a later question's decomposition;
``--also FILE`` adds every question of another file (the other shapes: comparisons, inferences, 3-hop
chains; ``--kinds`` keeps some of them), and ``--check-unchanged`` says whether any question of the first file would be shown other
demonstrations than with the shipped pool (its prompt, so its answers, would then change).

    .venv/bin/python benchmarks/make_decomposition_pool.py ../shared/data/multihop/dev.jsonl --first 100
    .venv/bin/python benchmarks/make_decomposition_pool.py ../shared/data/multihop/dev.jsonl --first 100 \
        --also ../shared/data/multihop/dev_b.jsonl --kinds comparison,inference --check-unchanged
"""

from __future__ import annotations

import argparse
import json

from sunar.compare import of_its_kind
from sunar.compare import shape as kind_of
from sunar.evals.data import read_questions
from sunar.evals.run import interleave
from sunar.prompts.demonstrations import SHIPPED_POOL, load_pool, pool_records, retrieve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("questions")
    parser.add_argument("--first", type=int, default=100)
    parser.add_argument("--also", action="append", default=[], help="another questions file, every question of it pooled")
    parser.add_argument("--out", default=str(SHIPPED_POOL))
    parser.add_argument("--kinds", default="chain,comparison,inference", help="the kinds of question (sunar.compare.shape) --also adds")
    parser.add_argument("--check-unchanged", action="store_true", help="fail if a question of the first file would see other demonstrations")
    parser.add_argument("--k", type=int, default=2, help="demonstrations shown (the cpu profile's: 2)")
    args = parser.parse_args()
    ids = {q.id for q in interleave(read_questions(args.questions))[: args.first]}
    with open(args.questions, encoding="utf-8") as f:
        records = [r for r in map(json.loads, f) if r["id"] in ids]
    for path in args.also:
        with open(path, encoding="utf-8") as f:
            records += [r for r in map(json.loads, f) if kind_of(r["question"]) in args.kinds.split(",")]
    pool = pool_records(records)
    with open(args.out, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in pool)
    print(f"{len(pool)} worked decompositions of the first {args.first} questions{' and ' + ', '.join(args.also) if args.also else ''} -> {args.out}")
    if args.check_unchanged:
        questions = [q.question for q in read_questions(args.questions)]
        new, shipped = load_pool(args.out), load_pool("")
        moved = [q for q in questions if retrieve(q, of_its_kind(q, new), args.k) != retrieve(q, of_its_kind(q, shipped), args.k)]
        print(f"{len(questions) - len(moved)} of {len(questions)} questions of {args.questions} see the same {args.k} demonstrations as with the shipped pool", flush=True)
        if moved:
            raise SystemExit(f"{len(moved)} would see others, e.g. {moved[0]!r}")


if __name__ == "__main__":
    main()
