"""What is kept on disk: the corpus reader, the index (Chroma vectors, BM25, the neighbour
graph) and the LLM call cache. Stores know nothing of LLMs or graphs."""
