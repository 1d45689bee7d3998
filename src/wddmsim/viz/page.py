"""The shell every HTML page of wddmsim shares: one style, tables, and a self-contained offline document.

A run's ``report.html`` (:mod:`wddmsim.viz.report`) and a sweep's (:mod:`wddmsim.viz.sweep_report`) look alike and
obey the same rules: everything inline, and a Content-Security-Policy that forbids every network fetch (images
only as ``data:`` URIs), so a stray reference fails loudly instead of leaking.  The early script counts uncaught
errors on ``<html data-errors>`` for the browser tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#263238;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;color:#cfd8dc}nav{padding:8px 24px;background:#eceff1;position:sticky;top:0;z-index:2}
nav a{margin-right:14px;color:#37474f;text-decoration:none}main{padding:0 24px 40px;max-width:1200px}
section{margin-top:28px}h2{font-size:17px;border-bottom:1px solid #cfd8dc;padding-bottom:4px}
table{border-collapse:collapse;margin:6px 0}td,th{padding:2px 10px;border-bottom:1px solid #e0e0e0;text-align:left}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}.ok{color:#2e7d32}.bad{color:#c62828;font-weight:bold}
svg.chart{width:100%;height:auto;background:#fff;border:1px solid #e0e0e0;font-size:11px}
svg .plot{fill:#fff;stroke:#cfd8dc}svg .grid{stroke:#eceff1}svg .axis{stroke:#90a4ae}
svg .mark{stroke:#e65100;stroke-dasharray:4 3}svg .mark-label{fill:#e65100;font-size:10px}
.cols{display:flex;flex-wrap:wrap;gap:24px}.cols>div{flex:1 1 320px}
pre{background:#fff;border:1px solid #e0e0e0;padding:8px;overflow-x:auto;font-size:12px}
.split{color:#c62828}.op{color:#1565c0}details{margin:2px 0 2px 14px}summary{cursor:pointer}
.segmap svg{width:100%;height:auto;background:#fff;border:1px solid #e0e0e0}.mono{font-family:ui-monospace,monospace}
.muted{color:#78909c}#scrub{width:60%}
.swatch{display:inline-block;width:11px;height:11px;margin:0 4px 0 10px;vertical-align:-1px}
figure{margin:12px 0}figure img{max-width:100%;height:auto;background:#fff;border:1px solid #e0e0e0}
figcaption{color:#546e7a;font-size:13px}
"""

EARLY_SCRIPT = (
    "window.addEventListener('error',function(){var d=document.documentElement.dataset;"
    "d.errors=String((+(d.errors||0))+1);});"
)

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
"""Nothing is fetched: styles and scripts inline, images as ``data:`` URIs."""


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], numeric: Sequence[bool] = ()) -> str:
    """An HTML table; integers with thousands separators, numeric columns right-aligned."""
    numeric = list(numeric) + [False] * (len(headers) - len(numeric))
    out = ["<table><tr>"]
    out += [f"<th{' class=n' if n else ''}>{escape(h)}</th>" for h, n in zip(headers, numeric, strict=True)]
    out.append("</tr>")
    for row in rows:
        out.append("<tr>")
        for cell, n in zip(row, numeric, strict=True):
            text = f"{cell:,}" if isinstance(cell, int) and not isinstance(cell, bool) else str(cell)
            out.append(f"<td{' class=n' if n else ''}>{escape(text)}</td>")
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


def document(
    *, title: str, heading: str, facts: str, ok: bool, sections: Sequence[tuple[str, str, str]], script: str = ""
) -> str:
    """The whole page: a header (``heading`` over the one-line ``facts``, green when ``ok``), a navigation bar, and
    one ``<section>`` per ``(anchor, title, html)``; ``script`` runs at the end of the body."""
    nav = "".join(f'<a href="#{key}">{escape(name)}</a>' for key, name, _ in sections)
    body = "".join(f'<section id="{key}"><h2>{escape(name)}</h2>{html}</section>' for key, name, html in sections)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style><script>{EARLY_SCRIPT}</script>"
        "</head><body>"
        f'<header><h1>{escape(heading)}</h1><p class="{"ok" if ok else "bad"}">{escape(facts)}</p>'
        f"</header><nav>{nav}</nav><main>{body}</main><script>{script}</script></body></html>\n"
    )


__all__ = ["CSP", "CSS", "EARLY_SCRIPT", "document", "table"]
