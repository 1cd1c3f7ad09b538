"""No hand-written lists of one family's opcodes outside isa/*.td.

The .td records are the one list of instructions: code that handles a family
iterates the generated X-macros (NPU_FOR_EACH_UNARY_OP, ...) or dispatches on
the typed structs, so that a new record reaches it without an edit. A list
written by hand goes stale silently: the new instruction falls into another
branch or is never tested. This test scans the tracked sources for the two
shapes such lists take:

- three or more opcodes of one family named in one switch (case labels) or in
  one statement (an array of opcodes, a chain of comparisons);
- an ordered comparison with an opcode (`op >= Opcode::ADD`): a range of
  opcodes is a list that silently takes in whatever is numbered into it.

Families and opcodes come from the records (npu-tblgen's JSON dump). Each
language is one entry of SCANNERS (opcode names, comparisons, multi-way
branches): C++ (Opcode::X) and the hand-written RTL (rtl/*.sv, OP_X; the
generated packages are not tracked sources). In the RTL an equality with
the opcode of an instruction that has vector-engine Recipes counts too: that
engine's per-instruction behaviour is its recipe, decoded by the generated
npu_recipe_pkg::recipe_select (routing by npu_isa_pkg::engine_of). The DMA
and matrix engines implement their few instructions by hand and may name
one of them (`opcode == OP_BMM`).
"""
import dataclasses
import json
import pathlib
import re
import subprocess
import typing

from conftest import REPO, build_dir

# Three opcodes of one family in one place make a list; two are a choice
# (e.g. a packet of either of two instructions in a fault test).
LIST_LENGTH = 3


@dataclasses.dataclass(frozen=True)
class Scanner:
    suffixes: tuple
    # Matches one opcode name; group 1 is the .td def name.
    opcode: re.Pattern
    # An ordered comparison with an opcode on either side.
    ordered_comparison: re.Pattern
    # An equality with an opcode (group 1 or 2 the .td name), flagged for
    # the opcodes of recipe instructions; None: not checked.
    equality: typing.Optional[re.Pattern]
    # (start, end) offsets of the multi-way branches (C++ switch bodies,
    # SystemVerilog case ... endcase) in comment-free text: the opcodes
    # named in one count together even though they span statements.
    branches: typing.Callable


def switch_bodies(text):
    """(start, end) offsets of the body of every `switch (...) { ... }`."""
    for m in re.finditer(r"\bswitch\s*\(", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text) or text[i] != "{":
            continue
        start, depth = i, 0
        while i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
            if depth == 0:
                break
        yield start, i


def case_bodies(text):
    """(start, end) offsets of every SystemVerilog `case ... endcase` (the
    innermost-first nesting does not matter: each body is one group)."""
    depth_starts = []
    for m in re.finditer(r"\b(unique0?\s+|priority\s+)?case[zx]?\b|\bendcase\b", text):
        if m.group(0) == "endcase":
            if depth_starts:
                yield depth_starts.pop(), m.end()
        else:
            depth_starts.append(m.start())


CPP_OPCODE = r"\bOpcode::([A-Z][A-Z0-9_]*)\b"
SV_OPCODE = r"\bOP_([A-Z][A-Z0-9_]*)\b"
SCANNERS = [
    Scanner(
        suffixes=(".cpp", ".h", ".cc", ".hpp"),
        opcode=re.compile(CPP_OPCODE),
        ordered_comparison=re.compile(
            r"(?<![<>-])[<>]=?\s*(?:\w+::)*" + CPP_OPCODE + r"|" + CPP_OPCODE + r"\s*[<>]=?(?![<>])"
        ),
        equality=None,
        branches=switch_bodies,
    ),
    Scanner(
        suffixes=(".sv", ".svh", ".v"),
        opcode=re.compile(SV_OPCODE),
        ordered_comparison=re.compile(
            r"(?<![<>])[<>]=?\s*(?:\w+::)*" + SV_OPCODE + r"|" + SV_OPCODE + r"\s*[<>]=?(?![<>=])"
        ),
        equality=re.compile(r"[!=]=\s*(?:\w+::)*" + SV_OPCODE + r"|" + SV_OPCODE + r"\s*[!=]="),
        branches=case_bodies,
    ),
]

# (path, why) for places that may list opcodes of one family by hand. Empty:
# every list is generated.
ALLOWED = []


def strip_comments_and_strings(text):
    """The text with comments, string and character literals blanked, line
    structure kept (so that offsets still give line numbers)."""
    pattern = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def family_lists(text, scanner, family_of):
    """(offset, family, opcodes) for every branch or statement of `text` that
    names LIST_LENGTH or more opcodes of one family; offset is that of the
    first of them."""
    groups = []
    for start, end in scanner.branches(text):
        named = scanner.opcode.finditer(text, start, end)
        groups.append([(m.start(), m.group(1)) for m in named])
    offset = 0
    for statement in text.split(";"):
        groups.append([(offset + m.start(), m.group(1)) for m in scanner.opcode.finditer(statement)])
        offset += len(statement) + 1
    found = []
    for names in groups:
        by_family = {}
        for at, name in names:
            if name in family_of:
                members = by_family.setdefault(family_of[name], {})
                members.setdefault(name, at)
        for family, members in by_family.items():
            if len(members) >= LIST_LENGTH:
                found.append((min(members.values()), family, list(members)))
    return found


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def tracked_sources():
    files = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, text=True, check=True
    ).stdout.split("\0")
    return [REPO / f for f in files if f]


def problems_in(path, text, family_of, recipe_ops=frozenset()):
    scanner = next((s for s in SCANNERS if path.suffix in s.suffixes), None)
    if scanner is None:
        return []
    code = strip_comments_and_strings(text)
    where = path.relative_to(REPO) if path.is_absolute() else path
    out = []
    for at, family, members in family_lists(code, scanner, family_of):
        out.append(
            f"{where}:{line_of(code, at)}: {len(members)} opcodes of family '{family}' listed by "
            f"hand ({', '.join(members)}): iterate the generated list instead"
        )
    for m in scanner.ordered_comparison.finditer(code):
        out.append(
            f"{where}:{line_of(code, m.start())}: ordered comparison with an opcode "
            f"('{m.group(0).strip()}'): an opcode range takes in whatever is numbered into it"
        )
    if scanner.equality is not None:
        for m in scanner.equality.finditer(code):
            if (m.group(1) or m.group(2)) in recipe_ops:
                out.append(
                    f"{where}:{line_of(code, m.start())}: comparison with the opcode of a recipe "
                    f"instruction ('{m.group(0).strip()}'): describe its behaviour in its Recipes"
                )
    return out


def records():
    return json.loads((build_dir() / "generated" / "isa" / "npu.json").read_text())


def families():
    r = records()
    return {name: r[name]["Family"] for name in r["!instanceof"]["Instruction"]}


def recipe_instructions():
    r = records()
    return frozenset(name for name in r["!instanceof"]["Instruction"] if r[name]["Recipes"])


def test_no_hand_written_opcode_lists():
    family_of = families()
    recipe_ops = recipe_instructions()
    allowed = {path for path, _why in ALLOWED}
    problems = []
    for path in tracked_sources():
        if str(path.relative_to(REPO)) in allowed or not path.is_file():
            continue
        problems += problems_in(path, path.read_text(errors="replace"), family_of, recipe_ops)
    assert not problems, "\n".join(problems)


# The scanner itself, on the shapes it must catch and the ones it must not.
FAMILY_OF = {"ADD": "elementwise", "SUB": "elementwise", "MUL": "elementwise",
             "EXP": "unary", "LOG": "unary", "ROW_SUM": "reduction"}


def scan(source):
    return problems_in(pathlib.Path("example.cpp"), source, FAMILY_OF)


def scan_sv(source):
    return problems_in(pathlib.Path("example.sv"), source, FAMILY_OF, frozenset({"EXP", "ADD"}))


def test_scanner_flags_case_labels_of_one_family_in_one_switch():
    source = """
    switch (op) {
    case isa::Opcode::ADD: return 1;
    case isa::Opcode::SUB: return 2;
    case isa::Opcode::MUL:
      return 3;
    }"""
    [problem] = scan(source)
    assert "example.cpp:3: 3 opcodes of family 'elementwise'" in problem
    assert "ADD, SUB, MUL" in problem


def test_scanner_flags_arrays_and_comparison_chains():
    assert scan("const isa::Opcode ops[] = {isa::Opcode::ADD, isa::Opcode::SUB,\n"
                "                           isa::Opcode::MUL};")
    assert scan("if (op == Opcode::ADD || op == Opcode::SUB || op == Opcode::MUL) f();")


def test_scanner_flags_opcode_ranges():
    [low, high] = scan("bool binary = op >= isa::Opcode::ADD && op <= isa::Opcode::MUL;")
    assert "ordered comparison with an opcode ('>= isa::Opcode::ADD')" in low
    assert "('<= isa::Opcode::MUL')" in high
    assert scan("bool late = Opcode::EXP < op;")


def test_scanner_accepts_choices_dispatch_and_text():
    # Two of a family are a choice, one case per family is dispatch, and
    # comments and strings are not code.
    assert not scan("p = packetAs(op, rng() & 1 ? isa::Opcode::ADD : isa::Opcode::SUB);")
    assert not scan("switch (op) { case Opcode::ADD: case Opcode::EXP: case Opcode::ROW_SUM: }")
    assert not scan("// Opcode::ADD Opcode::SUB Opcode::MUL\n"
                    "const char *s = \"Opcode::ADD Opcode::SUB Opcode::MUL\";")
    assert not scan("std::vector<isa::Opcode> v; auto x = static_cast<uint32_t>(Opcode::ADD);")
    assert not scan("std::cout << Opcode::ADD; x = Opcode::ADD >> 1; y = a->b < c;")


def test_scanner_flags_sv_opcode_ranges_comparisons_and_case_lists():
    [low, high] = scan_sv("assign b = opcode >= npu_isa_pkg::OP_ADD && opcode <= npu_isa_pkg::OP_MUL;")
    assert "ordered comparison with an opcode ('>= npu_isa_pkg::OP_ADD')" in low
    assert "('<= npu_isa_pkg::OP_MUL')" in high
    # One equality with a recipe instruction's opcode is a hand-written decode.
    [equal] = scan_sv("assign e = opcode == npu_isa_pkg::OP_EXP;")
    assert "comparison with the opcode of a recipe instruction ('== npu_isa_pkg::OP_EXP')" in equal
    [unequal] = scan_sv("assign e = npu_isa_pkg::OP_ADD != opcode;")
    assert "('OP_ADD !=')" in unequal
    assert not scan_sv("assign halt = opcode == npu_isa_pkg::OP_HALT;")
    [listed] = scan_sv("unique case (opcode)\n  npu_isa_pkg::OP_ADD: x = 1;\n"
                       "  npu_isa_pkg::OP_SUB: x = 2;\n  npu_isa_pkg::OP_MUL: x = 3;\n"
                       "  default: x = 0;\nendcase")
    assert "example.sv:2: 3 opcodes of family 'elementwise'" in listed


def test_scanner_accepts_sv_comments_and_other_names():
    assert not scan_sv("// opcode >= npu_isa_pkg::OP_ADD && opcode == OP_SUB\n"
                       "/* OP_ADD OP_SUB OP_MUL */ assign x = TOP_ADD == y;")
