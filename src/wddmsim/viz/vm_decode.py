"""A GPU VA walk, printed level by level: table, index, raw entry, decoded fields (``wddmsim vm-decode``)."""

from __future__ import annotations

from wddmsim.core.units import PAGE_SHIFT
from wddmsim.hw.mmu import Walk
from wddmsim.hw.pte import HW_PTE, TablePointer, Target


def decode_entry(word: int) -> str:
    """The fields of one hardware entry, flags by name."""
    if not word & 1:
        return "invalid"
    fields = HW_PTE.unpack(word)
    flags = [
        name for name in ("Valid", "Zero", "ReadOnly", "NoExecute", "Snoop", "LargePage", "Leaf64K") if fields[name]
    ]
    target = Target(fields["Target"] & 1).name
    parts = [" ".join(flags), f"Target={target}", f"Address={fields['Address'] << PAGE_SHIFT:#x}"]
    if fields["Key"]:
        parts.append(f"Key={fields['Key']:#x}")
    return "  ".join(parts)


def _table(pointer: TablePointer) -> str:
    return f"{pointer.target.name}:{pointer.address:#x}"


def render(walk: Walk, *, root: TablePointer, root_entries: int | None, space: str) -> str:
    limit = f", {root_entries} entries" if root_entries is not None else ""
    lines = [f"VA {walk.va:#x} in {space} (root {_table(root)}{limit})"]
    for step in walk.steps:
        raw = ", ".join(f"{w:#018x}" for w in step.words)
        kind = {"leaf": "4 KB-kind leaf", "leaf64k": "64 KB leaf"}.get(step.kind, "table")
        lines.append(f"  level {step.level}  {kind:14} {_table(step.table):22} index {step.index:4}  [{raw}]")
        for i, word in enumerate(step.words):
            label = ("4 KB table" if i == 0 else "64 KB table") + ": " if len(step.words) == 2 else ""
            lines.append(f"      {label}{decode_entry(word)}")
    if walk.fault:
        lines.append(f"  => fault: {walk.fault}")
    elif walk.zero:
        lines.append("  => Zero page: reads return zero, writes are dropped")
    else:
        assert walk.target is not None
        assert walk.address is not None
        lines.append(f"  => {walk.target.name} {walk.address:#x}")
    return "\n".join(lines)
