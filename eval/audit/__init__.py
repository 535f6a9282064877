"""The audit: the dataset card's claims recomputed from the user's files (SPEC §4).

Claims and tolerances are data (``configs/paper_numbers.toml``, read by
:mod:`eval.audit.claims`); :mod:`eval.audit.context` loads the inputs once;
the computations live in :mod:`eval.audit.questions`, :mod:`eval.audit.pairs`
and :mod:`eval.audit.retrieval`; :mod:`eval.audit.run` recomputes and judges
(:mod:`eval.audit.verdict`); :mod:`eval.audit.format` prints.
"""
