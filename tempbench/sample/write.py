"""Write a generated world and its benchmark in the release layout (SPEC §1.5)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np

from tempbench.core import atomic
from tempbench.core import layout as paths
from tempbench.core.digest import sha256_file
from tempbench.sample.builder import build_benchmark
from tempbench.sample.world import build_world


def edgelist_text(head: np.ndarray, tail: np.ndarray, relation: np.ndarray, year: np.ndarray,
                  entity_ids: list[str], relation_ids: list[str]) -> str:
    """TGB CSV text: header ``ts,head,tail,relation_type`` then one line per row."""
    e, r = entity_ids, relation_ids
    lines = [f"{y},{e[h]},{e[t]},{r[k]}" for y, h, t, k in zip(year.tolist(), head.tolist(), tail.tolist(), relation.tolist(), strict=True)]
    return "ts,head,tail,relation_type\n" + "\n".join(lines) + ("\n" if lines else "")


def labels_text(entity_ids: list[str], relation_ids: list[str], labels: dict[str, str]) -> str:
    """``id<TAB>label`` with a header; entities then relations, ids without a label omitted."""
    rows = ["id\tlabel"]
    for i in list(entity_ids) + list(relation_ids):
        lab = labels.get(i)
        if lab:
            rows.append(f"{i}\t{lab}")
    return "\n".join(rows) + "\n"



def write_sample(out: Path, scale: str, seed: int) -> Path:
    """Generate and write; see :func:`tempbench.sample.generate_sample`."""
    world = build_world(scale, seed)
    bench = build_benchmark(world.head, world.tail, world.relation, world.year, world.entity_ids, world.relation_ids,
                            world.labels, target_n=world.scale.n_questions, seed=seed + 1)

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        files = {
            paths.KG_FILE: lambda p: atomic.write_text(p, edgelist_text(world.head, world.tail, world.relation, world.year,
                                                                        world.entity_ids, world.relation_ids)),
            paths.LABELS_TSV: lambda p: atomic.write_text(p, labels_text(world.entity_ids, world.relation_ids, world.labels)),
            paths.BENCHMARK_LABELLED: lambda p: atomic.write_jsonl(p, bench.labelled),
            paths.BENCHMARK_IDS: lambda p: atomic.write_jsonl(p, bench.ids),
            paths.FLAGS_FILE: lambda p: atomic.write_jsonl(p, bench.flags),
        }
        manifest_files = {}
        for name, write in files.items():
            target = tmp / name
            write(target)
            manifest_files[name] = {"sha256": sha256_file(target), "bytes": target.stat().st_size}
        splits: dict[str, int] = {}
        for rec in bench.labelled:
            splits[rec["split"]] = splits.get(rec["split"], 0) + 1
        manifest = {
            "generator": "tempbench sample (SPEC §5)",
            "scale": scale,
            "seed": seed,
            "counts": {
                "rows": int(len(world.head)),
                "entities": int(len(np.union1d(world.head, world.tail))),
                "relations": int(len(np.unique(world.relation))),
                "labels": sum(1 for i in world.entity_ids + world.relation_ids if world.labels.get(i)),
                "year_min": int(world.year.min()),
                "year_max": int(world.year.max()),
                "questions": len(bench.labelled),
                "splits": {k: splits[k] for k in sorted(splits)},
                "interval": sum(1 for r in bench.labelled if r["operator_type"] == "interval"),
                "stale_functional": sum(1 for f in bench.flags if f["stale_functional"]),
                "dist_functional": sum(1 for f in bench.flags if f["dist_functional"]),
            },
            "files": manifest_files,
        }
        atomic.write_json(tmp / "MANIFEST.json", manifest)
        _move_into_place(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _move_into_place(tmp: Path, out: Path) -> None:
    """Rename the finished ``tmp`` directory to ``out``, replacing an older ``out``.

    When another process finished the same sample first (``out`` appeared with
    its manifest between our check and our rename), its copy is kept: same seed,
    same bytes.
    """
    old = None
    if out.exists():
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        os.replace(out, old)
    try:
        os.replace(tmp, out)
    except OSError:
        if not (out / "MANIFEST.json").is_file():
            raise
        shutil.rmtree(tmp, ignore_errors=True)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
