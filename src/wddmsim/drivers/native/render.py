"""Text rendered from the ABI table (:func:`wddmsim.drivers.native.abi.layout`), so the layout is written once.

* :func:`static_asserts` -- the ``_Static_assert`` block at the end of ``wddmsim/ddk.h``: ``sizeof`` of every
  structure, ``offsetof`` and ``sizeof`` of every direct member (nested members are asserted with their own
  structure).
* :func:`abi_table` -- the ABI section of ``docs/bring-your-own-driver.md``.

``python -m wddmsim.drivers.native.render --write [DOC]`` rewrites the header's block (and the document's, when a
path is given) between their markers; the layout test fails while either is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

from wddmsim.drivers.native.abi import AbiStruct, layout
from wddmsim.drivers.native.include import header_path

HEADER_BEGIN: Final = "/* BEGIN GENERATED LAYOUT ASSERTIONS */"
HEADER_END: Final = "/* END GENERATED LAYOUT ASSERTIONS */"
DOC_BEGIN: Final = "<!-- BEGIN GENERATED ABI TABLE -->"
DOC_END: Final = "<!-- END GENERATED ABI TABLE -->"


def _asserts_for(struct: AbiStruct) -> list[str]:
    lines = [f'WDDMSIM_STATIC_ASSERT(sizeof({struct.name}) == {struct.size}, "sizeof({struct.name})");']
    for f in struct.fields:
        if f.direct:
            lines.append(
                f"WDDMSIM_STATIC_ASSERT(offsetof({struct.name}, {f.path}) == {f.offset}, "
                f'"offsetof({struct.name}, {f.path})");'
            )
            lines.append(
                f"WDDMSIM_STATIC_ASSERT(sizeof((({struct.name} *)0)->{f.path}) == {f.size}, "
                f'"sizeof({struct.name}.{f.path})");'
            )
    return lines


def static_asserts() -> str:
    """The header's assertion block, markers included."""
    lines = [HEADER_BEGIN]
    for struct in layout():
        lines.extend(_asserts_for(struct))
    lines.append(HEADER_END)
    return "\n".join(lines)


def abi_table() -> str:
    """The document's ABI table (structure, member, offset, size), markers included."""
    lines = [DOC_BEGIN, "", "| structure | member | offset | size |", "|---|---|---:|---:|"]
    for struct in layout():
        lines.append(f"| `{struct.name}` | *(whole)* | 0 | {struct.size} |")
        lines.extend(f"| | `{f.path}` | {f.offset} | {f.size} |" for f in struct.fields)
    lines.extend(["", DOC_END])
    return "\n".join(lines)


def replace_block(text: str, begin: str, end: str, block: str) -> str:
    """``text`` with the span from ``begin`` to ``end`` (inclusive) replaced by ``block``."""
    start = text.index(begin)
    stop = text.index(end, start) + len(end)
    return text[:start] + block + text[stop:]


def current_block(text: str, begin: str, end: str) -> str:
    start = text.index(begin)
    return text[start : text.index(end, start) + len(end)]


def _rewrite(path: Path, begin: str, end: str, block: str) -> None:
    path.write_text(replace_block(path.read_text(encoding="utf-8"), begin, end, block), encoding="utf-8")


def main(argv: list[str]) -> int:
    """``--write [DOC]``: regenerate the header's block (and the document's)."""
    if not argv or argv[0] != "--write":
        print("usage: python -m wddmsim.drivers.native.render --write [docs/bring-your-own-driver.md]")
        return 2
    _rewrite(header_path(), HEADER_BEGIN, HEADER_END, static_asserts())
    if len(argv) > 1:
        _rewrite(Path(argv[1]), DOC_BEGIN, DOC_END, abi_table())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
