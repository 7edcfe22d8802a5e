"""``sunar index`` and ``sunar vectors``: a corpus into an index, embedded here or elsewhere."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def cmd_index(args: argparse.Namespace) -> int:
    from sunar.stores.index import build_index

    stats = build_index(
        args.corpus,
        args.index,
        embedder=args.embedder,
        neighbours=args.neighbours,
        chroma_url=args.chroma_url,
        rebuild=args.rebuild,
        progress=not args.quiet,
        vectors=args.vectors or None,
        device=args.device,
    )
    if stats.report.summary():
        print(f"warning: {stats.report.summary()}", file=sys.stderr)
    if stats.up_to_date:
        print(f"index {args.index} is up to date ({stats.documents} documents); nothing to do")
    else:
        print(
            f"indexed {stats.documents} documents into {args.index} "
            f"({stats.embedded} {f'stored from {args.vectors}' if args.vectors else 'embedded now'} in {stats.seconds_embed:.1f} s; "
            f"BM25 {stats.seconds_bm25:.1f} s; neighbour graph {stats.seconds_graph:.1f} s)"
        )
    return 0


def cmd_vectors(args: argparse.Namespace) -> int:
    from sunar.stores.corpus import CorpusReport
    from sunar.stores.vectors import write_vectors

    report = CorpusReport()
    count, dim, name = write_vectors(args.corpus, args.out, embedder=args.embedder, device=args.device, progress=not args.quiet, report=report)
    if report.summary():
        print(f"warning: {report.summary()}", file=sys.stderr)
    print(f"wrote {count} vectors of {dim} dimensions ({name}) to {args.out}; index them with: sunar index CORPUS --index DIR --vectors {args.out}")
    return 0


def add(sub: Any) -> None:
    """Its sub-commands, on the ``sunar`` parser."""
    p = sub.add_parser("index", help="index a JSONL corpus {id, title, text}: Chroma + BM25 + neighbour graph")
    p.add_argument("corpus", help="JSON Lines file, one {id, title, text} per line")
    p.add_argument("--index", required=True, help="index directory (created; resumable)")
    p.add_argument("--embedder", default="minilm", help="embedding model (default: bundled all-MiniLM-L6-v2)")
    p.add_argument("--neighbours", type=int, default=100, help="neighbours stored per document (default 100)")
    p.add_argument("--chroma-url", default="", help="use a Chroma server (chroma run) instead of DIR/chroma")
    p.add_argument("--rebuild", action="store_true", help="replace an index built from another corpus or model")
    p.add_argument("--vectors", default="", metavar="FILE.npz", help="store these paragraph vectors (from 'sunar vectors', run elsewhere) instead of embedding")
    p.add_argument("--device", default="cpu", help="embed on cpu (default), cuda, cuda:N or mps")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("vectors", help="embed a corpus's paragraphs into a file for 'sunar index --vectors' (e.g. on a GPU elsewhere)")
    p.add_argument("corpus", help="JSON Lines file, one {id, title, text} per line (the one to be indexed)")
    p.add_argument("out", help="the .npz file to write: ids, vectors, embedder")
    p.add_argument("--embedder", default="minilm", help="embedding model (default: bundled all-MiniLM-L6-v2); the index's --embedder")
    p.add_argument("--device", default="cpu", help="embed on cpu (default), cuda, cuda:N or mps")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_vectors)
