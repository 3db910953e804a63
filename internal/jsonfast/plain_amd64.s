#include "textflag.h"

// func plainPrefixSSE2(b []byte) int
// Requires len(b) >= 16. Scans whole 16-byte blocks: returns the index of
// the first byte that is a quote, a backslash, below 0x20 or above 0x7f,
// or the length of the whole blocks scanned when there is none in them.
// SSE2 is part of every amd64 CPU; long inputs go to plainPrefixAVX2
// where the CPU has it (see avx2Min).
TEXT ·plainPrefixSSE2(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	MOVQ SI, DI             // start of b
	ANDQ $~15, BX           // whole blocks only
	ADDQ SI, BX             // end of the whole blocks

	MOVL $0x22222222, AX    // '"'
	MOVL AX, X1
	PSHUFD $0, X1, X1
	MOVL $0x5c5c5c5c, AX    // '\\'
	MOVL AX, X2
	PSHUFD $0, X2, X2
	MOVL $0x20202020, AX    // ' ', the first byte allowed
	MOVL AX, X3
	PSHUFD $0, X3, X3

loop:
	MOVOU (SI), X0
	MOVO X0, X4
	PCMPEQB X1, X4          // == '"'
	MOVO X0, X5
	PCMPEQB X2, X5          // == '\\'
	MOVO X3, X6
	PCMPGTB X0, X6          // 0x20 > b as signed bytes: below 0x20, or 0x80 and above
	POR X5, X4
	POR X6, X4
	PMOVMSKB X4, AX
	TESTL AX, AX
	JNZ found
	ADDQ $16, SI
	CMPQ SI, BX
	JB loop
	SUBQ DI, SI
	MOVQ SI, ret+24(FP)
	RET

found:
	BSFL AX, AX
	SUBQ DI, SI
	ADDQ AX, SI
	MOVQ SI, ret+24(FP)
	RET

// func plainPrefixAVX2(b []byte) int
// plainPrefixSSE2 over 32-byte blocks; requires len(b) >= 32 and AVX2.
// VZEROUPPER on the way out spares the SSE code after it the penalty of
// dirty upper halves.
TEXT ·plainPrefixAVX2(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	MOVQ SI, DI
	ANDQ $~31, BX
	ADDQ SI, BX

	MOVL $0x22222222, AX
	MOVL AX, X1
	VPBROADCASTD X1, Y1
	MOVL $0x5c5c5c5c, AX
	MOVL AX, X2
	VPBROADCASTD X2, Y2
	MOVL $0x20202020, AX
	MOVL AX, X3
	VPBROADCASTD X3, Y3

avxloop:
	VMOVDQU (SI), Y0
	VPCMPEQB Y1, Y0, Y4     // == '"'
	VPCMPEQB Y2, Y0, Y5     // == '\\'
	VPCMPGTB Y0, Y3, Y6     // 0x20 > b as signed bytes
	VPOR Y5, Y4, Y4
	VPOR Y6, Y4, Y4
	VPMOVMSKB Y4, AX
	TESTL AX, AX
	JNZ avxfound
	ADDQ $32, SI
	CMPQ SI, BX
	JB avxloop
	VZEROUPPER
	SUBQ DI, SI
	MOVQ SI, ret+24(FP)
	RET

avxfound:
	VZEROUPPER
	BSFL AX, AX
	SUBQ DI, SI
	ADDQ AX, SI
	MOVQ SI, ret+24(FP)
	RET
