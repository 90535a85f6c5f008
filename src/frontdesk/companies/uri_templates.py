"""Matching a URI against a resource template (RFC 6570 levels 1 and 2) in linear time.

``resources/read`` tries a URI the client chose against every template of the company
before any access check. A backtracking regex such as ``(?P<a>.+)/(?P<b>.+)/(?P<c>.+)x``
takes polynomial time on a long URI of slashes, long enough to block the event loop for
every company. Here a template is a list of literals and variables, matched by two passes
over the URI, each linear in its length per template part:

1. backwards, which positions the rest of the template can match from (``tail``);
2. forwards, each variable taking the longest value that leaves the rest matchable.

The second pass gives the captures a greedy regex would (``acme://{+a}/{+b}`` reads
``acme://x/y/z`` as a=``x/y``, b=``z``), without ever retrying a choice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Longest URI matched against templates: far beyond any real resource URI, and it keeps the
# passes below to a few milliseconds whatever the URI holds.
MAX_MATCHED_URI_LENGTH = 8192

# {var}, {+var} and {#var}; other operators ({/var}, {?var}…) are level 3 and stay literal
# text, as they always have.
_EXPRESSION = re.compile(r"\{([+#]?)([A-Za-z0-9_]+)\}")
# RFC 6570 3.2.2: a simple string expansion percent-encodes every reserved character, so a
# value can hold none of the characters that delimit the parts of a URI after the authority.
_SIMPLE_STOPS = frozenset("/?#")
_MATCHABLE = 1


@dataclass(frozen=True, slots=True)
class Literal:
    text: str


@dataclass(frozen=True, slots=True)
class Variable:
    name: str
    # {+var} and {#var} (RFC 6570 3.2.3, 3.2.4): reserved characters pass through unencoded.
    reserved: bool


Part = Literal | Variable


@dataclass(frozen=True, slots=True)
class UriTemplate:
    parts: tuple[Part, ...]

    @classmethod
    def parse(cls, uri_template: str) -> UriTemplate:
        parts: list[Part] = []
        position = 0
        for expression in _EXPRESSION.finditer(uri_template):
            parts.append(Literal(uri_template[position : expression.start()]))
            if expression[1] == "#":
                parts.append(Literal("#"))  # RFC 6570 3.2.4: the fragment's own "#"
            parts.append(Variable(expression[2], reserved=expression[1] != ""))
            position = expression.end()
        parts.append(Literal(uri_template[position:]))
        return cls(tuple(part for part in parts if not isinstance(part, Literal) or part.text))

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables' values if ``uri`` is an expansion of this template, else None.

        Every variable's value is at least one character long, as ``.+`` required before.
        """
        if len(uri) > MAX_MATCHED_URI_LENGTH:
            return None
        tails = self._tails(uri)
        if not tails[0][0]:
            return None
        values: dict[str, str] = {}
        position = 0
        for index, part in enumerate(self.parts):
            if isinstance(part, Literal):
                position += len(part.text)
                continue
            last_end = _stop(uri, position) if not part.reserved else len(uri)
            end = tails[index + 1].rfind(_MATCHABLE, position + 1, last_end + 1)
            values[part.name] = uri[position:end]
            position = end
        return values

    def _tails(self, uri: str) -> list[bytearray]:
        """``tails[i][p]`` is 1 when parts ``i..`` can match ``uri[p:]`` exactly."""
        length = len(uri)
        after = bytearray(length + 1)
        after[length] = _MATCHABLE
        tails = [after]
        for part in reversed(self.parts):
            if isinstance(part, Literal):
                here = _literal_tail(uri, part.text, after)
            elif part.reserved:
                here = _reserved_tail(after)
            else:
                here = _simple_tail(uri, after)
            tails.append(here)
            after = here
        tails.reverse()
        return tails


def _literal_tail(uri: str, text: str, after: bytearray) -> bytearray:
    here = bytearray(len(after))
    size = len(text)
    for position in range(len(after) - size):
        if after[position + size] and uri.startswith(text, position):
            here[position] = _MATCHABLE
    return here


def _reserved_tail(after: bytearray) -> bytearray:
    # Any non-empty value: matchable from p when the rest is matchable somewhere after p.
    here = bytearray(len(after))
    last = after.rfind(_MATCHABLE)
    if last > 0:
        here[:last] = bytes([_MATCHABLE]) * last
    return here


def _simple_tail(uri: str, after: bytearray) -> bytearray:
    # A value of one or more characters outside _SIMPLE_STOPS: matchable from p when the
    # nearest q > p where the rest is matchable comes no later than the first stop at or
    # after p. One sweep from the end keeps both "nearest" positions.
    length = len(uri)
    here = bytearray(length + 1)
    nearest_matchable = length + 1  # none yet
    nearest_stop = length
    for position in range(length - 1, -1, -1):
        if after[position + 1]:
            nearest_matchable = position + 1
        if uri[position] in _SIMPLE_STOPS:
            nearest_stop = position
        if nearest_matchable <= nearest_stop:
            here[position] = _MATCHABLE
    return here


def _stop(uri: str, position: int) -> int:
    found = [index for index in (uri.find(stop, position) for stop in _SIMPLE_STOPS) if index >= 0]
    return min(found, default=len(uri))
