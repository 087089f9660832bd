"""The docs' examples stay true: every id in README.md and docs/*.md exists in the demo mailbox, every sentence
speaks to users, and the checker notices a stale example. Their shown outputs are compared with what the commands
print now by `test_docs_output.py` (slow: a server per command).

How examples are marked and refreshed: `server/tests/support/doc_examples.py`
(`.venv/bin/python -m server.tests.support.doc_examples --update`).
"""

from __future__ import annotations

import re

from server.runtime.config import PROJECT_ROOT
from server.tests.support import doc_examples

doc_files = doc_examples.doc_files
ALL = [example for path in doc_files() for example in doc_examples.examples(path)]


def test_the_readme_and_the_docs_have_checked_examples():
    where = {example.path.name for example in ALL}
    assert {"README.md", "tools.md"} <= where and len(ALL) >= 6


def test_every_id_in_the_docs_exists_in_the_demo_mailbox():
    known = doc_examples.demo_ids()
    unknown = {path.name: ids for path in doc_files() if (ids := doc_examples.unknown_ids(path, known))}
    assert unknown == {}


def test_the_checker_notices_a_stale_example():
    printed = "1. 6c9d57e813044060 | Q3 test meeting notes\n[mail 0123abcd] data\nDone: 3 tool calls in 1.2 s.\n"
    assert doc_examples.mismatch("1. 6c9d57e813044060 | Q3 test meeting notes\n...\n", printed) is None
    assert doc_examples.mismatch("...\n[mail 89abcdef] data\n...\n", printed) is None  # markers are random
    assert doc_examples.mismatch("1. 094f21dd9e812048 | Q3 test meeting notes\n...\n", printed)  # a stale id
    assert doc_examples.mismatch("1. 6c9d57e813044060 | Q3 test meeting notes\n", printed)  # output left out


def test_no_sentence_speaks_to_the_builders():
    builders = re.compile(r"\b(the spec|the spec's|the issue|the issue's|design card)\b", re.I)
    for path in [*doc_files(), PROJECT_ROOT / "bench" / "README.md"]:
        found = [line for line in path.read_text(encoding="utf-8").splitlines() if builders.search(line)]
        assert found == [], path.name


def test_every_link_between_the_docs_reaches_a_file():
    pending = {"docs/contract-tests.md"}  # written alongside this one
    broken = []
    for path in [*doc_files(), PROJECT_ROOT / "bench" / "README.md"]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            resolved = (path.parent / target).resolve()
            if not resolved.exists() and str(resolved.relative_to(PROJECT_ROOT)) not in pending:
                broken.append(f"{path.name}: {target}")
    assert broken == []


def test_ci_runs_the_readmes_test_command_and_the_demo_command_is_one_line():
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"```bash\n(\./setup_env\.sh && [^\n]+)\n```", readme)
    demo, tests = commands[0], commands[1]
    assert demo == "./setup_env.sh && .venv/bin/python -m server.cli --demo tour"
    assert tests.startswith("./setup_env.sh && .venv/bin/python -m pytest")
    ci_lines = (PROJECT_ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert tests in ci_lines  # other steps may stand on lines of their own
