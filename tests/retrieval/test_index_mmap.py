"""The index cache's memory-mapped layout: old layouts replaced quietly, odd manifests refused, pages shared."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np

from retriever.index import FORMAT_VERSION, load_index

KG_TEXT = "ts,head,tail,relation_type\n1990,Q1,Q2,P1\n1991,Q1,Q2,P1\n1992,Q2,Q3,P2\n1990,Q3,Q3,P1\n"


def _kg(tmp_path: Path) -> Path:
    kg = tmp_path / "kg.csv"
    kg.write_text(KG_TEXT, encoding="utf-8")
    return kg


def test_an_entry_of_an_older_layout_is_replaced_without_a_warning(tmp_path, capsys):
    kg, cache = _kg(tmp_path), tmp_path / "cache"
    first = load_index(kg, None, None, cache_dir=cache)
    entry = first.cache_path
    # what a format-1 entry looked like: one .npz beside the manifest
    shutil.rmtree(entry / "arrays")
    (entry / "arrays.npz").write_bytes(b"PK old")
    (entry / "manifest.json").write_text(json.dumps({"format": 1, "fingerprint": first.fingerprint, "sha256": {}}))
    again = load_index(kg, None, None, cache_dir=cache)
    assert not again.from_cache and again.fingerprint == first.fingerprint
    assert "corrupted" not in capsys.readouterr().err
    assert not (entry / "arrays.npz").exists() and json.loads((entry / "manifest.json").read_text())["format"] == FORMAT_VERSION
    assert load_index(kg, None, None, cache_dir=cache).from_cache


def test_a_manifest_naming_files_outside_the_entry_is_refused(tmp_path, capsys):
    kg, cache = _kg(tmp_path), tmp_path / "cache"
    first = load_index(kg, None, None, cache_dir=cache)
    manifest_path = first.cache_path / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["sha256"]["../../elsewhere.npy"] = "0" * 64
    manifest_path.write_text(json.dumps(manifest))
    again = load_index(kg, None, None, cache_dir=cache)
    assert not again.from_cache and "corrupted" in capsys.readouterr().err


def test_the_fingerprint_names_the_inputs_not_the_layout(tmp_path):
    # run metadata records the fingerprint: it must not change with the cache layout
    kg = _kg(tmp_path)
    a = load_index(kg, None, None, cache_dir=False)
    b = load_index(kg, None, None, cache_dir=tmp_path / "cache")
    assert a.fingerprint == b.fingerprint


def test_a_forked_worker_reads_the_same_mapped_pages(tmp_path):
    kg, cache = _kg(tmp_path), tmp_path / "cache"
    load_index(kg, None, None, cache_dir=cache)
    index = load_index(kg, None, None, cache_dir=cache)
    assert isinstance(index.kg.tail.base, np.memmap)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child sums the mapped column and reports it
        os.close(read)
        os.write(write, str(int(index.kg.tail.sum())).encode())
        os._exit(0)
    os.close(write)
    got = int(os.read(read, 64).decode())
    os.close(read)
    os.waitpid(pid, 0)
    assert got == int(np.asarray(index.kg.tail).sum())
