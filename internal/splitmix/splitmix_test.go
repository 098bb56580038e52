package splitmix

import "testing"

// TestHashIsSplitMix64 checks the first outputs of a generator seeded with
// 1234567 against the reference implementation's (Vigna, splitmix64.c).
func TestHashIsSplitMix64(t *testing.T) {
	want := []uint64{6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431, 16408922859458223821}
	s := uint64(1234567)
	for i, w := range want {
		if got := Hash(s); got != w {
			t.Errorf("output %d = %d, want %d", i, got, w)
		}
		s += Gamma
	}
	if Hash(0) != Mix(Gamma) {
		t.Error("Hash(x) is not Mix(x + Gamma)")
	}
}
