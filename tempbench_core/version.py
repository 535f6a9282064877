"""The package version: one definition, read by the build (``pyproject.toml``) and the run metadata."""

__version__ = "0.1.0"
