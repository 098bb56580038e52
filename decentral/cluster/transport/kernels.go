package transport

import "encoding/binary"

// Kernel sets: every rank says, in the Round of its inputs HELLO (see
// AgreeInputsKernels), which compute kernel set (avx512, avx2, neon, go)
// runs its models, so that rank 0's summary names every rank's. The name
// travels as up to 7 ASCII bytes, little-endian, zero-padded: a rank of an
// earlier build sends 0, which rank 0 files as unknown (""), and a rank 0
// of an earlier build ignores the field. Every set gives the same bits, so
// the sets may differ between ranks.

// maxKernelName is the longest kernel set name that travels; the top byte
// stays zero, so that the Round is a small round count to any reader.
const maxKernelName = 7

// packKernels returns the Round of an inputs HELLO that names the kernel
// set name: 0 for "" and for a name that does not travel (longer than
// maxKernelName bytes, or not lower-case letters, digits, '-' and '_').
func packKernels(name string) uint64 {
	if len(name) > maxKernelName {
		return 0
	}
	var b [8]byte
	for i := range len(name) {
		if !kernelNameByte(name[i]) {
			return 0
		}
		b[i] = name[i]
	}
	return binary.LittleEndian.Uint64(b[:])
}

// unpackKernels returns the kernel set name packKernels packed into r, or
// "" for 0 or a field that names none.
func unpackKernels(r uint64) string {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], r)
	n := 0
	for n < len(b) && b[n] != 0 {
		if n >= maxKernelName || !kernelNameByte(b[n]) {
			return ""
		}
		n++
	}
	for _, c := range b[n:] {
		if c != 0 {
			return ""
		}
	}
	return string(b[:n])
}

// kernelNameByte reports whether c may appear in a kernel set's name.
func kernelNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// fileKernels files, on rank 0, the kernel set rank named in the Round of
// its inputs HELLO.
func (c *Control) fileKernels(rank int, round uint64) {
	g := &c.gather
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ksets == nil {
		g.ksets = make(map[int]string)
	}
	g.ksets[rank] = unpackKernels(round)
}

// KernelSets returns, on rank 0 once AgreeInputsKernels has returned, the
// kernel set of every rank, by rank: "" for a rank that named none (one of
// an earlier build, or one that called AgreeInputs). It returns nil on
// another rank and before the agreement.
func (c *Control) KernelSets() []string {
	if c.cfg.Rank != 0 {
		return nil
	}
	g := &c.gather
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ksets == nil {
		return nil
	}
	sets := make([]string, len(c.cfg.Addrs))
	for r := range sets {
		sets[r] = g.ksets[r]
	}
	return sets
}
