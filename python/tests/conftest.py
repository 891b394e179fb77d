"""Shared paths for the Python tests: the repository root, the `dedust` binary (built by
`cargo build --release`; `DEDUST_BIN` overrides) and the shared real data beside the clone."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "datasets"


def dedust_bin():
    b = os.environ.get("DEDUST_BIN") or str(ROOT / "target" / "release" / "dedust")
    if not os.path.exists(b):
        pytest.fail(f"{b} not found: run `cargo build --release` first (or set DEDUST_BIN)")
    return b


def shared(rel):
    """A path under ../shared/datasets: skipped when absent, a failure when CI=true."""
    p = SHARED / rel
    if not p.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{p} missing with CI=true")
        pytest.skip(f"SKIP: {p} not found (the shared data sits beside the repository)")
    return p


def run(*args, **kw):
    return subprocess.run([dedust_bin(), *args], check=True, capture_output=True, **kw)
