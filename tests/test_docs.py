"""The user guide: generated reference pages are current, the README is short, the site builds."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


reference = _load(ROOT / "scripts" / "docs_reference.py", "docs_reference")
hooks = _load(ROOT / "docs" / "hooks.py", "docs_hooks")


def test_the_reference_pages_are_what_the_generator_writes_now():
    diff = reference.check(reference.pages())
    assert diff is None, f"{diff}\nrun: python scripts/docs_reference.py"


def test_the_check_names_the_first_differing_line(tmp_path):
    path, text = next(iter(reference.pages().items()))
    lines = text.splitlines()
    lines[5] = "something else"
    stale = tmp_path / path.name
    stale.write_text("\n".join(lines) + "\n")
    diff = reference.check({stale: text})
    assert diff is not None and diff.startswith(f"{stale}:6: differs")
    stale.write_text(text + "one line more\n")
    assert reference.check({stale: text}).startswith(f"{stale}:{len(lines) + 1}: the page has")
    assert reference.main(["--check"]) == 0


def test_every_command_has_its_help_on_the_commands_page():
    from tracker.cli import COMMANDS

    page = (ROOT / "docs" / "reference" / "commands.md").read_text()
    progs = [prog for prog, _ in reference.commands()]
    assert {f"tracker {name}" for name in COMMANDS} <= set(progs)
    for prog in progs:
        assert f"\n## {prog}\n" in page, f"{prog} is missing from docs/reference/commands.md"


def test_every_config_key_is_on_the_config_page():
    from tracker.experiments.config import keys_table

    page = (ROOT / "docs" / "reference" / "config.md").read_text()
    keys = [line.split()[0] for line in keys_table().splitlines()]  # what `tracker run --keys` prints
    assert len(keys) > 50
    missing = [k for k in keys if f"| `{k}` |" not in page]
    assert not missing, f"not in docs/reference/config.md: {missing}"
    sweep = [r.key for r in reference.sweep_keys()]
    assert all(f"| `{k}` |" in page for k in sweep)


def test_the_readme_is_short_and_starts_with_the_two_commands():
    lines = README.read_text().splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines (at most 150)"
    fence = lines.index("```bash")
    assert fence <= 5, "the two commands are at the README's very top"
    main_job, tests = lines[fence + 1], lines[fence + 2]
    assert main_job.endswith("pip install -q -e . && tracker run configs/soccer_light.yaml")
    assert tests.startswith("python3 -m venv .venv && ") and tests.endswith("python -m pytest -q -n 2")
    assert "docs" in tests.split("pip install")[1], "the test command installs the docs extra (mkdocs)"
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert tests in ci, ".ci/run runs exactly the README's test command"


def test_the_readme_links_to_pages_that_exist():
    import re

    text = README.read_text()
    for target in re.findall(r"\]\(([^)#\s]+)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), f"README.md links to {target}, which does not exist"


@pytest.mark.parametrize(("target", "page_dir", "expected"), [
    ("../tracker/control/spd.py", "", "tracker/control/spd.py"),
    ("../../tracker/retarget/pelvis.py#L3", "guide", "tracker/retarget/pelvis.py#L3"),
    ("tan2011.md", "", None),             # a page: MkDocs checks it
    ("../tan2011.md#tables-12", "guide", None),
    ("https://example.org/x.py", "", None),
    ("#a-heading", "guide", None),
    ("../../../shared/mocap/x.bvh", "guide", None),  # outside the repository: left to fail
])
def test_the_hook_finds_links_that_leave_docs(target, page_dir, expected):
    assert hooks.outside_target(target, page_dir) == expected


def test_the_hook_rewrites_source_links_to_code_text_or_the_code_host():
    md = ("See [`tracker/control/spd.py`](../tracker/control/spd.py) and [the map](../tracker/m.yaml).\n"
          "```\n[kept](../tracker/x.py)\n```\n")
    assert hooks.rewrite(md, "", None) == (
        "See `tracker/control/spd.py` and the map (`tracker/m.yaml`).\n```\n[kept](../tracker/x.py)\n```\n")
    assert "[the map](https://host/o/r/blob/main/tracker/m.yaml)" in hooks.rewrite(md, "", "https://host/o/r/")


def test_the_site_builds_strictly(tmp_path):
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        if os.environ.get("CI"):
            pytest.fail("mkdocs is not installed: the README's test command installs the 'docs' extra")
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-f",
                          str(ROOT / "mkdocs.yml"), "-d", str(site)],
                         capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    for page in ("index.html", "guide/clips/index.html", "reference/config/index.html", "tan2011/index.html"):
        assert (site / page).is_file(), page
    shutil.rmtree(site)


GUIDE = sorted((ROOT / "docs" / "guide").glob("*.md")) + [ROOT / "docs" / "index.md", README]


@pytest.mark.parametrize("page", GUIDE, ids=lambda p: p.name if p.parent.name != "guide" else f"guide/{p.name}")
def test_the_source_files_a_guide_page_names_exist(page):
    import re

    text = page.read_text()
    named = set(re.findall(r"`((?:tracker|scripts|tests|data|configs)/[\w./-]+\.(?:py|yaml|json|md|urdf))`", text))
    placeholders = {p for p in named if re.search(r"\b(?!README)[A-Z]{3,}\b", p)}  # configs/NAME.yaml
    missing = sorted(p for p in named - placeholders if not (ROOT / p).exists())
    assert not missing, f"{page.relative_to(ROOT)} names files that do not exist: {missing}"


def test_the_python_the_extending_page_imports_exists():
    import ast
    import importlib
    import re

    text = (ROOT / "docs" / "guide" / "extending.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    for block in blocks:
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom) and node.module.startswith("tracker"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    assert hasattr(module, alias.name), f"{node.module} has no {alias.name}"
