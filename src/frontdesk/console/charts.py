"""Usage charts as SVG drawn on the server: one horizontal bar per tool, its calls, and
its errors over them.

No chart library: the console's pages run no script at all (their Content-Security-Policy
is ``default-src 'none'``, as every page's), so a script library would need the policy
loosened and a vendored file kept up to date, while bars of known numbers are a few
rectangles. The chart is an image with a text alternative (role="img", a title naming each
bar's numbers), and the same numbers are in the table beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup, escape

BAR_HEIGHT = 22
GAP = 10
LABEL_WIDTH = 180
BAR_WIDTH = 420
NUMBER_WIDTH = 110


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    calls: int
    errors: int


def bar_chart(title: str, bars: list[Bar]) -> Markup:
    """An SVG of ``bars``, longest calls the full width; errors drawn over their calls."""
    most = max((bar.calls for bar in bars), default=0) or 1
    height = len(bars) * (BAR_HEIGHT + GAP) + GAP
    width = LABEL_WIDTH + BAR_WIDTH + NUMBER_WIDTH
    summary = "; ".join(f"{bar.label}: {bar.calls} calls, {bar.errors} errors" for bar in bars)
    parts = [
        f'<svg class="chart" role="img" aria-label="{escape(title)}: {escape(summary)}"'
        f' viewBox="0 0 {width} {height}" width="{width}" height="{height}"'
        ' xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
    ]
    for index, bar in enumerate(bars):
        top = GAP + index * (BAR_HEIGHT + GAP)
        middle = top + BAR_HEIGHT * 0.7
        calls = round(BAR_WIDTH * bar.calls / most)
        errors = round(BAR_WIDTH * min(bar.errors, bar.calls) / most)
        parts.append(f'<text x="0" y="{middle:.0f}">{escape(_shortened(bar.label))}</text>')
        parts.append(
            f'<rect class="calls" x="{LABEL_WIDTH}" y="{top}" width="{calls}"'
            f' height="{BAR_HEIGHT}"></rect>'
        )
        if errors:
            parts.append(
                f'<rect class="errors" x="{LABEL_WIDTH}" y="{top}" width="{errors}"'
                f' height="{BAR_HEIGHT}"></rect>'
            )
        parts.append(
            f'<text x="{LABEL_WIDTH + calls + 6}" y="{middle:.0f}">'
            f"{bar.calls} / {bar.errors} err</text>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 -- every text in it was escaped above


def _shortened(label: str) -> str:
    return label if len(label) <= 24 else f"{label[:23]}…"
