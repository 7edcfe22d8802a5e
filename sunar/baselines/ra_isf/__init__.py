"""RA-ISF (arXiv 2403.06840): retrieval-augmented iterative self-feedback."""
