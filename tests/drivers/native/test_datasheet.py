"""The reference GPU's data sheet in C (``wddmsim/refgpu.h``, decision 0110): generated from ``wddmsim.hw``'s own
layouts, shipped equal to what the generator prints, and agreeing with the Python codec byte for byte."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from wddmsim.drivers.native import include_dir
from wddmsim.drivers.native.datasheet import HEADER_NAME, PACKETS, render
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.aperture import gart_entry
from wddmsim.hw.pte import Target, encode_pte
from wddmsim.testing.cc import find_compilers


def test_the_shipped_header_is_what_the_generator_prints() -> None:
    shipped = (include_dir() / HEADER_NAME).read_text(encoding="utf-8")
    assert shipped == render(), "run: python -m wddmsim.drivers.native.datasheet"


def test_every_packet_struct_has_the_codec_s_size() -> None:
    for packet in PACKETS:
        fixed = cmd.FIXED_PARTS[packet.opcode]
        assert packet.size() == fixed.size and len(packet.fields) == len(fixed.format.lstrip("<"))


PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include <wddmsim/refgpu.h>
int main(void) {
    REFGPU_FILL fill;
    memset(&fill, 0, sizeof fill);
    fill.Opcode = REFGPU_OP_FILL; fill.Length = sizeof fill; fill.Dst = REFGPU_ADDRESS(REFGPU_SPACE_GPU_PHYS, 0x123000);
    fill.Size = 0x2000; fill.Pattern = 0xA5A5A5A5u;
    const unsigned char *p = (const unsigned char *)&fill;
    for (unsigned i = 0; i < sizeof fill; i++) printf("%02x", p[i]);
    printf("\n%llx\n", (unsigned long long)REFGPU_ADDRESS(REFGPU_SPACE_SYSTEM, 0x5000));
    printf("%llx\n", (unsigned long long)((1ull << REFGPU_GART_ENTRY_VALID_SHIFT)
        | ((0x77ull & REFGPU_GART_ENTRY_PFN_MASK) << REFGPU_GART_ENTRY_PFN_SHIFT)));
    printf("%llx\n", (unsigned long long)((1ull << REFGPU_PTE_VALID_SHIFT)
        | ((unsigned long long)REFGPU_TARGET_SYSTEM << REFGPU_PTE_TARGET_SHIFT)
        | ((0x42ull & REFGPU_PTE_ADDRESS_MASK) << REFGPU_PTE_ADDRESS_SHIFT)));
    return 0;
}
"""


@pytest.mark.parametrize("compiler", find_compilers() or [None], ids=lambda c: c.name if c else "none")
def test_c_code_built_on_the_header_encodes_what_the_codec_encodes(compiler: object, tmp_path: Path) -> None:
    if compiler is None:
        pytest.skip("no C compiler on this machine (CI installs gcc)")
    program = compiler.executable(PROGRAM, tmp_path / "datasheet")  # type: ignore[attr-defined]
    lines = subprocess.run([str(program)], capture_output=True, text=True, check=True).stdout.split()
    assert bytes.fromhex(lines[0]) == cmd.encode(cmd.Fill(hw_address(Space.GPU_PHYS, 0x123000), 0x2000, 0xA5A5A5A5))
    assert int(lines[1], 16) == hw_address(Space.SYSTEM, 0x5000)
    assert int(lines[2], 16) == gart_entry(0x77)
    assert int(lines[3], 16) == encode_pte(target=Target.SYSTEM, address=0x42 << 12)
