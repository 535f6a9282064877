"""The hand-made tiny KG of the retriever's worked cases (SPEC §2.3-§2.5), as an index.

``make_index`` builds a :class:`retriever.KGIndex`-shaped object from rows and
labels with the project's KG, incidence and BM25 classes, so cases can be
derived by hand on a handful of rows.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from retriever.bm25 import BM25
from retriever.incidence import Incidence
from retriever.kg import KG
from retriever.labels import render

ROWS = [
    ("A", "P1", "B", 1849), ("A", "P2", "H", 1850), ("A", "P1", "B", 1850), ("A", "P1", "B", 1850),
    ("B", "P3", "D", 1850), ("C", "P2", "H", 1850), ("A", "P1", "B", 1851),
    ("X1", "P2", "H", 1850), ("X2", "P2", "H", 1850), ("X3", "P2", "H", 1850), ("X4", "P2", "H", 1850),
    ("X5", "P2", "H", 1850), ("X6", "P2", "H", 1850), ("D", "P3", "A", 1850), ("A", "P1", "C", 1851),
    ("Q9", "P1", "C", 1850), ("QY", "P1", "C", 1850), ("E", "P1", "C", 1850),
]
LABELS = {
    "A": "Ada Lovelace", "B": "Babbage", "C": "Charles", "D": "Difference Engine", "H": "London",
    "X1": "Mr Ant", "X2": "Mr Bee", "X3": "Mr Cat", "X4": "Mr Dog", "X5": "Mr Ant", "X6": "Mr Eel",
    "QY": "Y", "E": "Ada", "P1": "knows", "P2": "lives in", "P3": "built",
}


def make_index(rows=ROWS, labels=LABELS):
    """A KGIndex-shaped object built with the project's KG, Incidence and BM25."""
    ents: list[str] = []
    rels: list[str] = []
    for s, r, o, _ in rows:
        for e in (s, o):
            if e not in ents:
                ents.append(e)
        if r not in rels:
            rels.append(r)
    kg = KG(
        head=np.array([ents.index(s) for s, _, _, _ in rows], dtype=np.int32),
        tail=np.array([ents.index(o) for _, _, o, _ in rows], dtype=np.int32),
        relation=np.array([rels.index(r) for _, r, _, _ in rows], dtype=np.int32),
        year=np.array([t for *_, t in rows], dtype=np.int64),
        entity_ids=ents,
        relation_ids=rels,
    )
    elab = [render(labels, e) for e in ents]
    rlab = [render(labels, r) for r in rels]
    return SimpleNamespace(kg=kg, entity_labels=elab, relation_labels=rlab, incidence=Incidence.build(kg),
                           bm25=BM25.build(kg, elab, rlab), fingerprint="tiny")


#: The hand-made good input files of the bad-input corpus (``tests/data/bad/good``).
GOOD = Path(__file__).resolve().parents[1] / "data" / "bad" / "good"


def good_root(path: Path) -> Path:
    """A data root at ``path`` (SPEC §1.5 layout) holding copies of the corpus's good KG, labels and benchmark."""
    (path / "benchmark").mkdir(parents=True)
    shutil.copy(GOOD / "kg.csv", path / "tkgl-smallpedia_edgelist.csv")
    shutil.copy(GOOD / "labels.tsv", path / "labels.tsv")
    shutil.copy(GOOD / "benchmark_labelled.jsonl", path / "benchmark" / "benchmark_labelled.jsonl")
    return path
