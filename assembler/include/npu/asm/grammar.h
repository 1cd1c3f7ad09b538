// Editor grammars of the .npuasm language (docs/assembly.md, "Editor
// support"): a Vim syntax file, a TextMate grammar (VS Code) and a Pygments
// lexer. Their words come from the generated ISA tables (mnemonics, operand
// names, flags, enumeration values) and from the assembler's directive
// table, their patterns from its lexical rules, so an editor highlights
// what this assembler accepts and a new instruction needs no edit here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace npu::as {

enum class GrammarFormat { Vim, TextMate, Pygments };

// "vim", "textmate" or "pygments"; nullopt for any other name.
std::optional<GrammarFormat> parseGrammarFormat(std::string_view name);
std::string editorGrammar(GrammarFormat format);

// The directives the assembler accepts (".equ", ...), in its table's order.
std::vector<std::string> directiveNames();

} // namespace npu::as
