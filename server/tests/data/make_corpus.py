"""Writes the content-fidelity corpus: one .eml per case under corpus/, plus expected.json.

    .venv/bin/python -m server.tests.data.make_corpus          # rewrite server/tests/data/corpus/
    .venv/bin/python -m server.tests.data.make_corpus --check  # exit 1 if the committed files are stale

The output is a pure function of the case definitions (corpus_text.py, corpus_structure.py, corpus_more.py), so
regenerating gives byte-identical files; test_content_fidelity.py checks that. The 5 MB case is not written here:
tests and the parse benchmark build it with `corpus_structure.large_case()` so the repository stays small.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from server.tests.data.corpus_mime import Case
from server.tests.data.corpus_more import more_cases
from server.tests.data.corpus_structure import structure_cases
from server.tests.data.corpus_text import charset_cases, encoding_cases, header_cases

DATA_DIR = Path(__file__).resolve().parent
CORPUS_DIR = DATA_DIR / "corpus"
EXPECTED = DATA_DIR / "expected.json"


def all_cases() -> list[Case]:
    """Every committed corpus case, in file order."""
    cases = charset_cases() + header_cases() + encoding_cases() + structure_cases() + more_cases()
    names = [case.name for case in cases]
    duplicates = {name for name in names if names.count(name) > 1}
    if duplicates:
        raise ValueError(f"duplicate case names: {sorted(duplicates)}")
    return cases


def file_name(index: int, case: Case) -> str:
    return f"{index + 1:02d}-{case.name}.eml"


def render() -> dict[str, bytes]:
    """File name -> bytes for everything make_corpus writes (the .eml files and expected.json)."""
    cases = all_cases()
    files = {file_name(i, case): case.raw for i, case in enumerate(cases)}
    expected = [
        {"file": file_name(i, case), "case": case.name, "what": case.what, "expect": case.expect}
        for i, case in enumerate(cases)
    ]
    files["expected.json"] = (json.dumps(expected, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    return files


def _target(name: str) -> Path:
    return EXPECTED if name == "expected.json" else CORPUS_DIR / name


def stale_files() -> list[str]:
    """Names whose committed bytes differ from a fresh render, plus stray .eml files."""
    files = render()
    stale = [name for name, data in files.items() if not _target(name).exists() or _target(name).read_bytes() != data]
    stray = [p.name for p in CORPUS_DIR.glob("*.eml")] if CORPUS_DIR.exists() else []
    return stale + sorted(name for name in stray if name not in files)


def write() -> int:
    CORPUS_DIR.mkdir(parents=True, exist_ok=True)
    files = render()
    for stray in CORPUS_DIR.glob("*.eml"):
        if stray.name not in files:
            stray.unlink()
    for name, data in files.items():
        _target(name).write_bytes(data)
    return len(files) - 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        for name in stale:
            print(f"stale: {name}")
        return 1 if stale else 0
    print(f"wrote {write()} messages to {CORPUS_DIR} and {EXPECTED.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
