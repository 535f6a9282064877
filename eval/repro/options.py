"""The options of the reproducibility measures (SPEC §8), the decisions among them named.

SPEC §8 leaves three choices to this project; each is a named option whose
default is SPEC's reading (documented in ``configs/README.md``, "Reproducibility
measures"):

========================= ============= ===================================================================
option                    default       alternative
========================= ============= ===================================================================
``ktu_cut``               ``shorter``   ``equal``: only questions whose two lists have the same length, uncut
``rbo_both_empty``        ``skip``      ``one``: two empty lists agree perfectly (RBO 1)
``trp_empty``             ``zero``      ``skip``: a question with an empty retrieval has no TRP value
========================= ============= ===================================================================

``rbo_p`` (0.95) and ``rbo_depth`` (1000) are the parameters of RBO
(Webber et al. 2010), with ``repro_eval``'s defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

from eval.repro.rbo import DEFAULT_DEPTH, DEFAULT_P
from tempbench_core.errors import ConfigError

#: The per-question measures compared by default (SPEC §8).
DEFAULT_MEASURES: tuple[str, ...] = ("TRP", "CCR", "recall@15", "ndcg@15", "mrr")
#: The configuration every other one is an ablation of (SPEC §8's baseline ``b``).
DEFAULT_BASELINE = "oracle"

KTU_CUTS = ("shorter", "equal")
RBO_BOTH_EMPTY = ("skip", "one")
TRP_EMPTY = ("zero", "skip")


@dataclass(frozen=True)
class ReproOptions:
    """How the SPEC §8 figures are computed; the defaults are SPEC's readings.

    Parameters
    ----------
    ktu_cut:
        ``"shorter"``: cut both lists of a question to the shorter length
        before Kendall's tau; ``"equal"``: leave out questions whose lists
        differ in length (no cut).
    rbo_p, rbo_depth:
        RBO's persistence ``p`` (0 < p < 1) and evaluation depth ``d`` (>= 1).
    rbo_both_empty:
        ``"skip"``: a question where both lists are empty is left out of RBO's
        mean; ``"one"``: it counts as RBO 1.
    trp_empty:
        ``"zero"``: an empty retrieval has TRP 0; ``"skip"``: it has no TRP
        value, and every TRP figure leaves it out.
    """

    ktu_cut: str = "shorter"
    rbo_p: float = DEFAULT_P
    rbo_depth: int = DEFAULT_DEPTH
    rbo_both_empty: str = "skip"
    trp_empty: str = "zero"

    def __post_init__(self) -> None:
        for name, allowed in (("ktu_cut", KTU_CUTS), ("rbo_both_empty", RBO_BOTH_EMPTY), ("trp_empty", TRP_EMPTY)):
            value = getattr(self, name)
            if value not in allowed:
                raise ConfigError(f"{name} is {value!r}; expected one of {', '.join(allowed)}")
        p = self.rbo_p
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 < float(p) < 1.0:
            raise ConfigError(f"--rbo-p is {p!r}; expected a number strictly between 0 and 1 (SPEC §8 default "
                              f"{type(self).rbo_p})")
        d = self.rbo_depth
        if isinstance(d, bool) or not isinstance(d, int) or d < 1:
            raise ConfigError(f"--rbo-depth is {d!r}; expected an integer >= 1 (SPEC §8 default "
                              f"{type(self).rbo_depth})")
