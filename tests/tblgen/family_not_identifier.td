// EXPECT: 3:5: error: family 'dma ops' of 'copy' must be a lower-case identifier (it names the generated list NPU_FOR_EACH_DMA OPS)
include "test_preamble.td"
def COPY : Instruction<"copy", 1, "dma ops", [], "", Cost<E_Control, 1, 0>, "Copy.">;
