#include "textflag.h"

// func plainPrefixAVX2(b []byte) int
// Requires AVX2 and len(b) >= 32. Scans whole 32-byte blocks: returns the
// index of the first byte that is a quote, a backslash, below 0x20 or
// above 0x7f, or the length of the whole blocks scanned when there is
// none in them.
TEXT ·plainPrefixAVX2(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	MOVQ SI, DI             // start of b
	ANDQ $~31, BX           // whole blocks only
	ADDQ SI, BX             // end of the whole blocks

	MOVL $0x22222222, AX    // '"'
	MOVD AX, X1
	VPBROADCASTD X1, Y1
	MOVL $0x5c5c5c5c, AX    // '\\'
	MOVD AX, X2
	VPBROADCASTD X2, Y2
	MOVL $0x20202020, AX    // ' ', the first byte allowed
	MOVD AX, X3
	VPBROADCASTD X3, Y3

loop:
	VMOVDQU (SI), Y0
	VPCMPEQB Y0, Y1, Y4     // == '"'
	VPCMPEQB Y0, Y2, Y5     // == '\\'
	VPCMPGTB Y0, Y3, Y6     // 0x20 > b as signed bytes: below 0x20, or 0x80 and above
	VPOR Y4, Y5, Y4
	VPOR Y4, Y6, Y4
	VPMOVMSKB Y4, AX
	TESTL AX, AX
	JNZ found
	ADDQ $32, SI
	CMPQ SI, BX
	JB loop

	VZEROUPPER
	SUBQ DI, SI
	MOVQ SI, ret+24(FP)
	RET

found:
	VZEROUPPER
	BSFL AX, AX
	SUBQ DI, SI
	ADDQ AX, SI
	MOVQ SI, ret+24(FP)
	RET
