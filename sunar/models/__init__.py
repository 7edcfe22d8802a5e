"""The models behind narrow interfaces: the generative LLM (:mod:`~sunar.models.llm`, providers
chosen by :mod:`~sunar.models.providers`), the batch scorer, the NLI, and the embedder."""
