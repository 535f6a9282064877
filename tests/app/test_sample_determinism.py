"""Same seed, same bytes, whatever PYTHONHASHSEED (SPEC §5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tempbench.sample import generate_sample

_SCRIPT = """
import hashlib, json, sys
from pathlib import Path
from tempbench.sample import generate_sample
out = generate_sample(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]))
files = sorted(p for p in out.rglob('*') if p.is_file())
print(json.dumps({str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}))
"""


def _digests(tmp: Path, name: str, scale: str, seed: int, hashseed: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    root = Path(__file__).resolve().parents[2]
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp / name), scale, str(seed)],
                          env=env, capture_output=True, text=True, check=True, cwd=root)
    return json.loads(done.stdout)


def test_same_seed_same_bytes_across_hash_seeds(tmp_path: Path) -> None:
    a = _digests(tmp_path, "a", "small", 42, "0")
    b = _digests(tmp_path, "b", "small", 42, "12345")
    assert len(a) == 6 and "MANIFEST.json" in a
    assert a == b


def test_other_seed_other_bytes(tmp_path: Path) -> None:
    a = generate_sample(tmp_path / "a", "tiny", 1)
    b = generate_sample(tmp_path / "b", "tiny", 2)
    ma = json.loads((a / "MANIFEST.json").read_text())
    mb = json.loads((b / "MANIFEST.json").read_text())
    for name in ma["files"]:
        assert ma["files"][name]["sha256"] != mb["files"][name]["sha256"]


def test_default_sample_dir_is_used_by_the_cli(tmp_path: Path, monkeypatch) -> None:
    from tempbench.cli import main
    from tempbench_core.layout import default_sample_dir

    monkeypatch.setenv("TEMPBENCH_CACHE", str(tmp_path / "cache"))
    assert main(["sample", "--scale", "tiny", "--seed", "5"]) == 0
    assert (default_sample_dir("tiny", 5) / "MANIFEST.json").is_file()
