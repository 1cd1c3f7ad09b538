// EXPECT: 4:5: error: enum value name 'bool' of Kind is not an identifier (or is a C++ keyword)
include "test_preamble.td"

def Kind : EnumType<"Kind", [EnumValue<"bool", 0>, EnumValue<"word", 1>], "Kinds.">;
