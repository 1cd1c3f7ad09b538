// EXPECT: 4:5: error: packet field 'extra' overlaps field 'flags'
// EXPECT: packet.td:4:5: note: field 'flags' defined here
include "test_preamble.td"
def PF_Extra : PacketField<"extra", 32, 32, "u32", "Clashes with flags.">;
