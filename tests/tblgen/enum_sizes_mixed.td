// EXPECT: 4:5: error: enum Width: value wide has no element size but narrow has one (an enumeration of types sizes every value)
include "test_preamble.td"

def Width : EnumType<"Width", [SizedValue<"narrow", 0, 2, "">, EnumValue<"wide", 1>], "Widths.">;
