"""Docs that cannot drift: the numbers on a paper's page are blocks a reproduction writes.

A reproduction writes each table (or any text with numbers) it owns on ``docs/NAME.md`` with
:func:`write_block`, into ``OUT/blocks/BLOCK.md``. The page holds the same text between two
markers::

    <!-- reproduce allen2007 claims -->
    | claim | paper | ours | like for like | verdict |
    ...
    <!-- /reproduce allen2007 claims -->

``tracker reproduce NAME --write-docs`` puts a run's blocks into the page and copies the figures
the page shows from the run (by file name); ``tracker reproduce NAME --check`` reruns the reproduction and fails, naming the page's line, where the page and the
run differ, where the page has a block the run did not write, or the run one the page lacks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tracker.errors import ConfigError

BLOCKS = "blocks"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_OPEN = re.compile(r"^<!-- reproduce (\S+) (\S+) -->\s*$")
_CLOSE = re.compile(r"^<!-- /reproduce (\S+) (\S+) -->\s*$")


def write_block(out: str | Path, block: str, text: str) -> Path:
    """Write ``text`` as block ``block`` of the run in ``out``; returns the file written."""
    from tracker.atomic import write_text_atomic

    if not _NAME.match(block):
        raise ValueError(f"block name {block!r}: lower-case letters, digits, '_' and '-' only")
    folder = Path(out) / BLOCKS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{block}.md"
    write_text_atomic(path, text.strip("\n") + "\n")
    return path


def run_blocks(out: str | Path) -> dict[str, list[str]]:
    """The blocks a run in ``out`` wrote: name -> lines."""
    folder = Path(out) / BLOCKS
    return {f.stem: f.read_text(encoding="utf-8").strip("\n").split("\n")
            for f in sorted(folder.glob("*.md"))} if folder.is_dir() else {}


@dataclass(frozen=True)
class PageBlock:
    """A block on a page: its lines (blank lines around them dropped), the 1-based page line of
    the first, and the page lines of its two markers."""

    lines: list[str]
    first: int
    opens: int
    closes: int


def page_blocks(page: Path, name: str) -> dict[str, PageBlock]:
    """The blocks of reproduction ``name`` on ``page``.

    Raises:
        ConfigError: an unclosed, nested, misnamed or repeated block (one line naming the page's line).
    """
    blocks: dict[str, PageBlock] = {}
    lines = page.read_text(encoding="utf-8").split("\n")
    open_at: tuple[str, int] | None = None
    for k, line in enumerate(lines, start=1):
        m_open, m_close = _OPEN.match(line), _CLOSE.match(line)
        if m_open:
            if open_at:
                raise ConfigError(f"{page}:{k}: block {m_open.group(2)!r} opens inside block {open_at[0]!r}")
            if m_open.group(1) != name:
                raise ConfigError(f"{page}:{k}: a block of {m_open.group(1)!r} on the page of {name!r}")
            if m_open.group(2) in blocks:
                raise ConfigError(f"{page}:{k}: block {m_open.group(2)!r} appears twice")
            open_at = (m_open.group(2), k)
        elif m_close:
            if not open_at or m_close.group(2) != open_at[0]:
                raise ConfigError(f"{page}:{k}: closes block {m_close.group(2)!r}, which is not open")
            first, last = open_at[1] + 1, k - 1  # 1-based page lines of the body
            while first <= last and not lines[first - 1].strip():
                first += 1
            while last >= first and not lines[last - 1].strip():
                last -= 1
            blocks[open_at[0]] = PageBlock(lines[first - 1:last], first, open_at[1], k)
            open_at = None
    if open_at:
        raise ConfigError(f"{page}:{open_at[1]}: block {open_at[0]!r} is never closed")
    return blocks


def check(page: Path, name: str, out: str | Path) -> list[str]:
    """Where ``page`` and the run in ``out`` differ: one line each, naming the page's line."""
    have, made = page_blocks(page, name), run_blocks(out)
    problems = []
    for block, pb in have.items():
        if block not in made:
            problems.append(f"{page}:{pb.first}: block {block!r} is on the page but the run did not write it")
            continue
        new = made[block]
        for k, (a, b) in enumerate(zip(pb.lines, new)):
            if a != b:
                problems.append(f"{page}:{pb.first + k}: block {block!r} differs\n  page: {a}\n  now:  {b}")
                break
        else:
            if len(pb.lines) != len(new):
                problems.append(f"{page}:{pb.first + min(len(pb.lines), len(new))}: block {block!r} has "
                                f"{len(pb.lines)} lines on the page, {len(new)} from the run")
    for block in made:
        if block not in have:
            problems.append(f"{page}: the run wrote block {block!r}, which the page lacks "
                            f"(add <!-- reproduce {name} {block} --> ... <!-- /reproduce {name} {block} -->)")
    return problems


def write_docs(page: Path, name: str, out: str | Path) -> list[str]:
    """Put the run's blocks into ``page`` (each where its markers are); returns the blocks the
    page lacks markers for, which are left out."""
    from tracker.atomic import write_text_atomic

    made = run_blocks(out)
    have = page_blocks(page, name)
    lines = page.read_text(encoding="utf-8").split("\n")
    for block, pb in sorted(have.items(), key=lambda kv: -kv[1].opens):
        if block in made:  # the lines between the markers (0-based: opens .. closes - 2)
            lines[pb.opens:pb.closes - 1] = ["", *made[block], ""]
    write_text_atomic(page, "\n".join(lines))
    copy_figures(page, out)
    return [b for b in made if b not in have]


_IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+\.(?:png|svg|jpg|gif))\)")


def copy_figures(page: Path, out: str | Path) -> list[Path]:
    """Copy the figures the page shows that the run drew (a run's file with the linked file's
    name) to where the page links them; returns the files written."""
    import shutil

    drawn = {f.name: f for f in Path(out).rglob("*") if f.is_file() and f.parent.name != BLOCKS}
    written = []
    for link in _IMAGE.findall(page.read_text(encoding="utf-8")):
        if "://" in link:
            continue
        source, target = drawn.get(Path(link).name), (page.parent / link).resolve()
        if source is not None and source.resolve() != target:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            written.append(target)
    return written
