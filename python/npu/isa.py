"""npu.isa: the instruction set the toolchain was generated from (the same
tables as `npu-isa --json`), for introspection.

    npu.isa.instruction("matmul").operands[0].name   # 'c'
"""
from __future__ import annotations

import dataclasses

from . import _npu

version: str = _npu.isa_version
hash: int = _npu.isa_hash


@dataclasses.dataclass(frozen=True)
class Operand:
    name: str
    kind: str  # addr, u32, i32, f32, bits32, flag, enum
    optional: bool
    doc: str
    values: tuple[str, ...]  # an enum operand's accepted value names


@dataclasses.dataclass(frozen=True)
class Instruction:
    name: str  # the .td record, e.g. COPY_STRIDED
    mnemonic: str
    opcode: int
    family: str
    engine: str  # control, dma, matrix, vector
    doc: str
    operands: tuple[Operand, ...]


def _load() -> tuple[Instruction, ...]:
    return tuple(
        Instruction(name=i["name"], mnemonic=i["mnemonic"], opcode=i["opcode"], family=i["family"],
                    engine=i["engine"], doc=i["doc"],
                    operands=tuple(Operand(name=o["name"], kind=o["kind"], optional=o["optional"],
                                           doc=o["doc"], values=tuple(o["values"])) for o in i["operands"]))
        for i in _npu.instructions())


_INSTRUCTIONS = _load()
_BY_MNEMONIC = {i.mnemonic: i for i in _INSTRUCTIONS}


def instructions() -> tuple[Instruction, ...]:
    return _INSTRUCTIONS


def instruction(mnemonic: str) -> Instruction:
    """The instruction of a mnemonic (any case); KeyError naming it otherwise."""
    try:
        return _BY_MNEMONIC[mnemonic.lower()]
    except KeyError:
        raise KeyError(f"no instruction '{mnemonic}' in ISA {version}") from None
