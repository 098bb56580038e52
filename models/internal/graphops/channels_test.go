package graphops

import (
	"runtime"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// channelSpecs check Channels and ShuffleChannels through small
// ShuffleNet-style networks, run by TestLayersMatchFiniteDifferences and
// TestLayersProgramMatchesTapeMachine; their bits are channelsDigest's,
// not layersDigest's.
var channelSpecs = []netSpec{
	{"shuffle-unit", []int{4, 5, 5}, 3, func(b net, x any) any {
		c := b.(channeler)
		h := b.relu("r0", b.conv(x, "c0", 8, 3, 1, 1))
		x1, x2 := c.channels("x1", h, 0, 4), c.channels("x2", h, 4, 8) // h read by both halves of a chunk
		x2 = b.relu("r1", b.groupConv(b.conv(x2, "c1", 4, 1, 1, 0), "dw", 4, 3, 1, 1, 4))
		h = c.shuffle("sh", b.concat("cat", x1, x2), 2)
		h = b.add("res", c.channels("mid", h, 2, 6), c.shuffle("sh4", c.channels("lo", h, 0, 4), 4))
		return b.dense(b.globalAvgPool("gap", b.relu("r2", h)), "fc", 3, false)
	}},
	{"channels-flat", []int{2, 3, 3}, 4, func(b net, x any) any { // ranges and a shuffle of vectors [n,F]
		c := b.(channeler)
		d := b.tanh("t", b.dense(x, "d1", 6, true))
		h := b.concat("cat", c.channels("a", d, 1, 4), c.shuffle("s", d, 3), c.channels("z", x, 1, 2))
		return b.dense(h, "fc", 4, false)
	}},
}

// channeler is the test networks' Channels and ShuffleChannels, outside
// net so that the interface other tests extend stays as it is.
type channeler interface {
	channels(name string, x any, from, to int) any
	shuffle(name string, x any, groups int) any
}

func (b *graphNet) channels(name string, x any, from, to int) any {
	return b.g.Channels(name, node(x), from, to)
}

func (b *graphNet) shuffle(name string, x any, groups int) any {
	return b.g.ShuffleChannels(name, node(x), groups)
}

// pick is the float64 reference of both: channel k of y is channel src[k]
// of x.
func pick(x *t64, src []int) *t64 {
	shape := append([]int{x.shape[0], len(src)}, x.shape[2:]...)
	y := newT64(shape...)
	c, p := x.shape[1], len(x.v)/x.shape[0]/x.shape[1]
	for i := range x.shape[0] {
		for o, s := range src {
			copy(y.v[(i*len(src)+o)*p:], x.v[(i*c+s)*p:(i*c+s+1)*p])
		}
	}
	return y
}

func (r *refNet) channels(_ string, xa any, from, to int) any {
	src := make([]int, to-from)
	for k := range src {
		src[k] = from + k
	}
	return pick(t(xa), src)
}

func (r *refNet) shuffle(_ string, xa any, groups int) any {
	x := t(xa)
	per := x.shape[1] / groups
	src := make([]int, x.shape[1])
	for k := range src {
		// torch: view(n, g, C/g, …).transpose(1, 2): y[j][i] = x[i][j]
		j, i := k/groups, k%groups
		src[k] = i*per + j
	}
	return pick(x, src)
}

// TestChannelsRefuseBadArguments checks the one-line errors of a range
// outside the channels and of groups that do not divide them.
func TestChannelsRefuseBadArguments(t *testing.T) {
	for _, c := range []struct {
		name string
		add  func(g *Graph) error
		want string
	}{
		{"range", func(g *Graph) error {
			g.Channels("ch", g.Input("x", make([]float32, 2*4*9), 2, 4, 3, 3), 2, 5)
			return g.Err()
		}, "ch: channels [2,5) of a tensor of shape (2, 4, 3, 3), want 0 ≤ from < to ≤ its channels"},
		{"groups", func(g *Graph) error {
			g.ShuffleChannels("sh", g.Input("x", make([]float32, 2*6*9), 2, 6, 3, 3), 4)
			return g.Err()
		}, "sh: 4 groups of the channels of a tensor of shape (2, 6, 3, 3), want a number of groups dividing them"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.add(New(NewWorkspace(), true))
			if err == nil || err.Error() != c.want {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// envChannelsChild makes the test binary print channelSpecs' digest and
// exit (see TestChannelsSameBitsOnEveryKernelSet).
const envChannelsChild = "GTSTORM_TEST_CHANNELS_DIGEST"

// TestChannelsSameBitsOnEveryKernelSet runs the networks of channelSpecs
// (Channels and ShuffleChannels between convolutions, Concat, Add and
// dense layers) in a child process per kernel set this CPU runs and
// checks that every set gives the recorded bits, wantChannelsDigest: the
// layers are copies, the same bits on every set and architecture.
func TestChannelsSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestChannelsSameBitsOnEveryKernelSet", envChannelsChild,
		func(t testing.TB) string { return specsDigest(t, channelSpecs) })
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantChannelsDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantChannelsDigest, digests["go"])
		}
	}
}

// wantChannelsDigest is specsDigest(channelSpecs) on every kernel set and
// architecture, recorded with the pure-Go set on amd64.
const wantChannelsDigest = "202fef79756dd32b2ad131de947bc8cad8156242fcf2650443a7932269ba00a3"
