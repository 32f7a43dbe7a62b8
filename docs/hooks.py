"""MkDocs hook: links from a page to files of the repository outside docs/.

The pages are read on GitHub as well as on the built site, so they link to source files the way
GitHub resolves them (``[pelvis.py](../tracker/retarget/pelvis.py)``). Those files are not part of
the site; this hook rewrites such a link before MkDocs validates it: to the file on the code host
when ``repo_url`` is set in ``mkdocs.yml`` (``REPO_URL/blob/main/PATH``), else to the path as code
text (``pelvis.py (`tracker/retarget/pelvis.py`)``). Links inside docs/ and web links are left
alone, so a broken link to a page still fails ``mkdocs build --strict``.
"""

from __future__ import annotations

import posixpath
import re

#: ``[text](target)`` or ``![alt](target)``, target without spaces, optional "title".
LINK = re.compile(r"(?P<bang>!?)\[(?P<text>[^\]\n]*)\]\((?P<target>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")
BRANCH = "main"


def outside_target(target: str, page_dir: str) -> str | None:
    """The repository path ``target`` names when it leaves docs/ (``tracker/x.py#L3``), else None.

    ``page_dir`` is the page's folder relative to docs/ (``""``, ``"guide"``).
    """
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith(("#", "/")):
        return None  # a web address, mailto:, an anchor on the page, a site-absolute path
    path, _, anchor = target.partition("#")
    joined = posixpath.normpath(posixpath.join("docs", page_dir, path))
    if joined == "docs" or joined.startswith("docs/") or joined.startswith(".."):
        return None  # inside docs/ (MkDocs checks it), or outside the repository (left to fail)
    return joined + (f"#{anchor}" if anchor else "")


def rewrite(markdown: str, page_dir: str, repo_url: str | None) -> str:
    """``markdown`` with its links to repository files outside docs/ rewritten (fenced code kept)."""
    out, fenced = [], False
    for line in markdown.splitlines(keepends=True):
        if FENCE.match(line):
            fenced = not fenced
        if not fenced and "](" in line:
            line = LINK.sub(lambda m: _replace(m, page_dir, repo_url), line)
        out.append(line)
    return "".join(out)


def _replace(m: re.Match, page_dir: str, repo_url: str | None) -> str:
    rel = outside_target(m["target"], page_dir)
    if rel is None:
        return m[0]
    if repo_url:
        return f"{m['bang']}[{m['text']}]({repo_url.rstrip('/')}/blob/{BRANCH}/{rel}{m['title'] or ''})"
    path = rel.partition("#")[0]
    text = m["text"].strip()
    if not text or text.strip("`") in (path, posixpath.basename(path)) or path.startswith(text.strip("`") + "/"):
        return f"`{path}`"
    return f"{text} (`{path}`)"


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ANN001 (MkDocs' objects)
    page_dir = posixpath.dirname(page.file.src_uri)
    return rewrite(markdown, page_dir, config.get("repo_url"))
