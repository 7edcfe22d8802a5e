"""Build the shipped pool of worked decompositions (``sunar/data/decompositions.jsonl``) from the
first N dev questions in the order ``sunar eval`` takes them (datasets interleaved), so an eval of
the questions after them (``--skip N``) never sees its own or a later question's decomposition.

    .venv/bin/python benchmarks/make_decomposition_pool.py ../shared/data/multihop/dev.jsonl --first 100
"""

from __future__ import annotations

import argparse
import json

from sunar.evals.data import read_questions
from sunar.evals.run import interleave
from sunar.prompts.demonstrations import SHIPPED_POOL, pool_records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("questions")
    parser.add_argument("--first", type=int, default=100)
    parser.add_argument("--out", default=str(SHIPPED_POOL))
    args = parser.parse_args()
    ids = {q.id for q in interleave(read_questions(args.questions))[: args.first]}
    with open(args.questions, encoding="utf-8") as f:
        records = [r for r in map(json.loads, f) if r["id"] in ids]
    pool = pool_records(records)
    with open(args.out, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in pool)
    print(f"{len(pool)} worked decompositions of the first {args.first} questions -> {args.out}")


if __name__ == "__main__":
    main()
