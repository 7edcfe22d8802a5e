"""Every prompt the product sends, one module per format, each holding its messages *and* the
parser that reads the model's reply, so changing one never silently breaks the other.

    answer    a short answer to a (sub-)question from documents, and the cleaner of short answers
    self_ask  Self-Ask's next step (follow-up or final answer)
    mer       the Meta Evidence Reasoner (rationale and final answer)
    nli       the LLM as a judge of whether two answers mean the same
    support   the LLM as a judge of whether a hop's pages state its answer (``hop_support``)
    steps     the line reader shared by the step-by-step formats (Self-Ask, GenSco)

GenSco's and RA-ISF's prompts live with their graphs (:mod:`sunar.baselines`).
Wording and exemplars are the project's own; their structure follows the paper.
"""
