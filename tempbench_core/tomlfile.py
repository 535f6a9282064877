"""Reading TOML (configurations, claims): :mod:`tomllib`, or ``tomli`` on Python 3.10."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tempbench_core.errors import ConfigError, MissingDataError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

TOMLDecodeError = tomllib.TOMLDecodeError


def loads_toml(text: str) -> dict[str, Any]:
    """Parse TOML text (raises :data:`TOMLDecodeError`)."""
    return tomllib.loads(text)


def load_toml(path: str | Path, what: str = "TOML file") -> dict[str, Any]:
    """Read a TOML file; a missing, unreadable or invalid file is a user error naming it."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise MissingDataError(f"{what} not found: {path}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a {what}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror}") from None
