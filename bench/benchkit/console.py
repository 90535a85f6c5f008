"""A Prometheus console template drawn from the Grafana dashboard JSON, panel by panel.

Grafana cannot be installed here, but Prometheus serves console templates with its console
graph library (PromConsole.Graph on Rickshaw). The page is generated from the dashboard
each time, never kept beside it: each row of the dashboard becomes a heading and each
panel a section with the panel's title and one graph of all its queries, Grafana's
variables filled in, its legend format turned into PromConsole's, and its width taken from
the panel's place on Grafana's 24-column grid.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchkit.processes import BenchError

PAGE_WIDTH = 1280
MARGIN = 12
GAP = 8
CONTENT_WIDTH = PAGE_WIDTH - 2 * MARGIN
GRID_COLUMNS = 24
GRAPH_HEIGHT = 150
# Room a section takes beside its graph: padding, border and the y-axis title's column.
SECTION_CHROME = 70
# Grafana's {{label}} in a legend is PromConsole's [[label]].
_LEGEND_LABEL = re.compile(r"\{\{\s*(\w+)\s*\}\}")
# The formatter and suffix of each Grafana unit the dashboard uses: PromConsole's own, or
# the page's (PromConsole writes 2 ms as "2m", and has no percentages).
UNITS = {
    "reqps": ("PromConsole.NumberFormatter.humanizeNoSmallPrefix", "/s"),
    "ops": ("PromConsole.NumberFormatter.humanizeNoSmallPrefix", "/s"),
    "s": ("seconds", ""),
    "percentunit": ("percent", ""),
    "short": ("PromConsole.NumberFormatter.humanizeNoSmallPrefix", ""),
}

HEAD = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<link rel="stylesheet" href="/classic/static/rickshaw/rickshaw.min.css">
<link rel="stylesheet" href="/classic/static/css/prom_console.css">
<script src="/classic/static/d3/d3.min.js"></script>
<script src="/classic/static/rickshaw/rickshaw.min.js"></script>
<script>var PATH_PREFIX = "";</script>
<script src="/classic/static/js/prom_console.js"></script>
<script>
function percent(x) {{ return x === null ? "" : +(100 * x).toPrecision(3) + "%"; }}
function seconds(x) {{
  if (x === null) {{ return ""; }}
  if (x === 0) {{ return "0"; }}
  return Math.abs(x) < 1 ? +(1000 * x).toPrecision(3) + " ms" : +x.toPrecision(3) + " s";
}}
</script>
<style>
body {{ font: 13px sans-serif; margin: {margin}px; width: {content}px; color: #222; }}
h1 {{ font-size: 18px; margin: 0 0 4px; }}
p.about {{ margin: 0 0 8px; color: #555; }}
h2 {{ font-size: 15px; margin: 14px 0 6px; border-bottom: 1px solid #ccc; }}
.grid {{ display: flex; flex-wrap: wrap; gap: {gap}px; }}
.panel {{ border: 1px solid #ddd; border-radius: 3px; padding: 4px 6px; box-sizing: border-box; }}
.panel h3 {{ font-size: 13px; margin: 0 0 2px; }}
.prom_graph_ytitle {{ font-size: 11px; color: #555; }}
.prom_graph_xtitle, .prom_graph_link {{ display: none; }}
.rickshaw_legend {{ background: none; color: #222; padding: 0; font-size: 11px; }}
.rickshaw_legend .line {{ display: inline-block; margin-right: 10px; }}
.rickshaw_legend .action {{ display: none; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p class="about">{about}</p>
"""

GRAPH = """<div class="panel" style="width: {width}px">
<h3>{title}</h3>
<div id="panel{id}"></div>
<script>
new PromConsole.Graph({{
  node: document.querySelector("#panel{id}"),
  expr: {expressions},
  name: {names},
  duration: {duration},
  endTime: {end},
  width: {graph_width},
  height: {height},
  min: 0,
  yAxisFormatter: {formatter},
  yHoverFormatter: {formatter},
  yUnits: {units},
}});
</script>
</div>
"""


@dataclass(frozen=True, slots=True)
class Window:
    """What the graphs show: ``duration`` seconds up to ``end`` (a Unix time)."""

    end: float
    duration: float


def _script_value(value: Any) -> str:
    # The page is a Go template: "{{" would start an action, so none may be in the data.
    text = json.dumps(value)
    if "{{" in text or "}}" in text:
        raise BenchError(f"a dashboard query holds '{{{{' or '}}}}': {text}")
    return text


def filled_in(expression: str, variables: Mapping[str, str]) -> str:
    for variable, value in variables.items():
        expression = expression.replace(variable, value)
    if "$" in expression:
        raise BenchError(f"a Grafana variable with no value here: {expression}")
    return expression


def _panel(panel: dict[str, Any], variables: Mapping[str, str], window: Window) -> str:
    targets = panel.get("targets", [])
    # Grafana's columns, with the gaps between sections taken out.
    width = int(panel["gridPos"]["w"] / GRID_COLUMNS * (CONTENT_WIDTH + GAP)) - GAP
    unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "short")
    formatter, suffix = UNITS.get(unit, UNITS["short"])
    return GRAPH.format(
        id=int(panel["id"]),
        title=html.escape(panel["title"]),
        width=width,
        graph_width=width - SECTION_CHROME,
        height=GRAPH_HEIGHT,
        expressions=_script_value([filled_in(t["expr"], variables) for t in targets]),
        names=_script_value(
            [_LEGEND_LABEL.sub(r"[[\1]]", t.get("legendFormat") or t["expr"]) for t in targets]
        ),
        duration=round(window.duration),
        end=round(window.end),
        formatter=formatter,
        units=_script_value(suffix),
    )


def console_page(dashboard: Path, variables: Mapping[str, str], window: Window, about: str) -> str:
    """The console template: the dashboard's rows and panels in their order."""
    document = json.loads(dashboard.read_text(encoding="utf-8"))
    title = str(document.get("title", dashboard.name))
    head = HEAD.format(
        title=html.escape(title),
        about=html.escape(about),
        margin=MARGIN,
        content=CONTENT_WIDTH,
        gap=GAP,
    )
    parts = [head]
    parts.append('<div class="grid">\n')
    for panel in sorted(document["panels"], key=lambda p: (p["gridPos"]["y"], p["gridPos"]["x"])):
        if panel["type"] == "row":
            parts.append(f'</div>\n<h2>{html.escape(panel["title"])}</h2>\n<div class="grid">\n')
        elif panel.get("targets"):
            parts.append(_panel(panel, variables, window))
    parts.append("</div>\n</body>\n</html>\n")
    return "".join(parts)
