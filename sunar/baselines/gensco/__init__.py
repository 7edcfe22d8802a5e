"""GenSco (arXiv 2407.10245): greedy passage selection guided by a step-by-step decomposition."""
