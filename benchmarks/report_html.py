"""The report as one self-contained HTML page: the Markdown report's text and tables, its
figures inline as ``data:`` URIs; no script, no style sheet, no font or image fetched from
anywhere (it opens offline, and from an e-mail attachment).

Only the Markdown that :func:`dmlopt.benchmarks.report.markdown` writes is converted: headings,
paragraphs, pipe tables (``\\|`` an escaped bar), images of files in the report's directory,
inline code and bold. Every piece of text is HTML-escaped (names in a store are data).
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

_STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 110em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.85em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.5em; text-align: left; }
th { background: #eee; }
tr:nth-child(even) td { background: #f8f8f8; }
img { max-width: 100%; margin: 0.5em 0; }
code { background: #f2f2f2; padding: 0 0.2em; }
"""

_IMAGE = re.compile(r"^!\[([^\]]*)\]\(([^)]+)\)$")


def _inline(text: str) -> str:
    """One line of Markdown text as HTML: escaped, with ``code`` and **bold**."""
    out, pos = [], 0
    for m in re.finditer(r"``\s(.+?)\s``|`([^`]*)`", text):
        out.append(_bold(html.escape(text[pos:m.start()])))
        out.append(f"<code>{html.escape(m.group(1) or m.group(2) or '')}</code>")
        pos = m.end()
    out.append(_bold(html.escape(text[pos:])))
    return "".join(out)


def _bold(escaped: str) -> str:
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escaped)


def _cells(line: str) -> list[str]:
    """The cells of one pipe-table line (``\\|`` a bar inside a cell, ``\\\\`` a backslash)."""
    cells, cur, i = [], "", 0
    body = line.strip()[1:-1] if line.strip().endswith("|") else line.strip()[1:]
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body) and body[i + 1] in "|\\":
            cur += body[i + 1]
            i += 2
            continue
        if c == "|":
            cells.append(cur.strip())
            cur = ""
        else:
            cur += c
        i += 1
    cells.append(cur.strip())
    return cells


def _image(alt: str, name: str, outdir: Path) -> str:
    """An ``<img>`` with the PNG inline; a note when the file is not in the report's folder."""
    path = (outdir / name)
    if "/" in name or "\\" in name or name.startswith(".") or not path.is_file():
        return f"<p>(figure {html.escape(name)} not found)</p>"
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<figure><img alt="{html.escape(alt, quote=True)}" '
            f'src="data:image/png;base64,{data}"></figure>')


def page(markdown: str, outdir: Path) -> str:
    """The HTML page of a Markdown report whose figures are files in ``outdir``.

    Parameters
    ----------
    markdown : the text :func:`dmlopt.benchmarks.report.markdown` returned.
    outdir : the report's directory (the PNGs it names).

    Returns
    -------
    str
        A complete HTML document with every figure inline.

    References
    ----------
    Issue 54, item 5.
    """
    lines = markdown.splitlines()
    body: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        m = re.match(r"^(#{1,6}) (.*)$", line)
        if m:
            n = len(m.group(1))
            body.append(f"<h{n}>{_inline(m.group(2))}</h{n}>")
            i += 1
            continue
        m = _IMAGE.match(line.strip())
        if m:
            body.append(_image(m.group(1), m.group(2), outdir))
            i += 1
            continue
        if line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(lines[i])
                i += 1
            head = _cells(rows[0])
            data = [_cells(r) for r in rows[2:]]
            body.append("<table>\n<thead><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head)
                        + "</tr></thead>\n<tbody>\n"
                        + "\n".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r)
                                    + "</tr>" for r in data)
                        + "\n</tbody>\n</table>")
            continue
        para = []
        while (i < len(lines) and lines[i].strip() and not lines[i].startswith(("|", "#"))
               and not _IMAGE.match(lines[i].strip())):
            para.append(lines[i])
            i += 1
        body.append(f"<p>{_inline(' '.join(para))}</p>")
    title = "Benchmark report"
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{title}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")
