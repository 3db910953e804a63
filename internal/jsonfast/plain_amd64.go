package jsonfast

import "golang.org/x/sys/cpu"

// vectorPlain is turned off by tests of the portable path.
var vectorPlain = true

// avx2Plain says whether plainPrefixVector may use AVX2 for long inputs.
var avx2Plain = cpu.X86.HasAVX2

// avx2Min is the length from which AVX2 scans faster than SSE2. AVX2
// scans 64 KiB at 17 GB/s against SSE2's 9-11, but each call of it costs
// 300-600 ns more on the 2-core VM this was measured on
// (BenchmarkPlainPrefixAVX2: 1 KiB 540 against 133 ns, 4 KiB 705
// against 506, 64 KiB 3.8 against 5.9-7.0 us): it pays from about 10 KiB.
var avx2Min = 16 << 10

// plainPrefixVector returns how many whole 16-byte blocks at the start of
// b are plain, times 16, or where in the first block that is not the
// first byte that is not plain lies.
func plainPrefixVector(b []byte) int {
	if !vectorPlain || len(b) < 16 {
		return 0
	}
	if avx2Plain && len(b) >= avx2Min {
		return plainPrefixAVX2(b)
	}
	return plainPrefixSSE2(b)
}

// plainPrefixSSE2 and plainPrefixAVX2 are implemented in plain_amd64.s.
//
//go:noescape
func plainPrefixSSE2(b []byte) int

//go:noescape
func plainPrefixAVX2(b []byte) int
