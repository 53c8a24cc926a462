"""The report page: the shell (header, nav, footer; CSS and JavaScript inline) around the sections, each rendered
from its row of ``sections.SECTIONS`` (its view's context into its partial ``sections/<key>.html``).

The page is one self-contained file: CSS, JavaScript and SVG are inline, and
nothing refers to the network. The templates are jinja2 with autoescaping;
the only markup passed in unescaped is the SVG that ``charts.py`` builds (it
escapes its own text) and the rendered sections.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import jinja2
from markupsafe import Markup

from ..analysis.claims.records import web_link
from .sections import SECTIONS, Page, Section, body_order, nav_text
from .tables import fmt_seconds

HERE = Path(__file__).resolve().parent
PROGRESS_RELOAD_S = 30        # a page made while a run measures reloads itself this often (execution.page)


def environment(keep_trailing_newline: bool, sections: Sequence[Section] = ()) -> jinja2.Environment:
    """The templates' environment (this package's, then each section's own folder: ``Section.where``); a partial
    keeps its last newline (the sections join as the one template did)."""
    where = [str(HERE)] + [str(s.where) for s in sections if s.where is not None]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(where), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=keep_trailing_newline)
    env.filters["seconds"] = fmt_seconds
    env.tests["web_link"] = web_link       # `{% if url is web_link %}`: a page links out only to http(s) pages
    return env


def render(page: Page, sections: Sequence[Section] = SECTIONS) -> str:
    """The page: every section's view, its partial rendered, in ``sections.body_order``; the nav from the rows."""
    partials = environment(keep_trailing_newline=True, sections=sections)
    contexts = {s.key: s.view(page) for s in sections}
    order, moved = body_order(sections, contexts)
    body = partials.get_template("sections/no_claims.html").render(upgrade=contexts.get("upgrade", {}).get(
        "upgrade")) if moved else ""
    body += "".join(partials.get_template(f"sections/{s.key}.html").render(**contexts[s.key]) for s in order)
    summary = page.summary
    targets = sorted({c.target for c in page.cells}, key=lambda t: (t != "cpu", t))
    return environment(keep_trailing_newline=False).get_template("template.html").render(
        css=Markup((HERE / "report.css").read_text(encoding="utf-8")),
        js=Markup((HERE / "report.js").read_text(encoding="utf-8")),
        summary=summary, nav=Markup(nav_text(sections, contexts)), body=Markup(body),
        benchmarks=[t.benchmark for t in page.tables], targets=targets, progress=page.progress,
        reload_s=PROGRESS_RELOAD_S)
