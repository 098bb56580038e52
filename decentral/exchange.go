package decentral

import (
	"context"
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// Exchange carries one communication round's messages between neighbours.
// Every round the Optimizer calls Send once for every node with the vectors the
// algorithm shares (x, or x and v) and the nodes that mix them this
// round (the node's neighbours in W_t; a directed W_t may list fewer or other
// nodes than it receives from), then Wait, then — concurrently, from
// its worker goroutines — Recv for every node and neighbour, and mixes what it
// receives with its row of W. An implementation that moves the vectors between
// processes can replace MemExchange without touching the algorithms.
type Exchange interface {
	// Send delivers node's vectors for this round to each node in to and
	// returns the number of bytes that took. The vectors and to stay
	// unchanged until the round's Recv calls are over.
	Send(node int, to []int, vecs [][]float32) (bytes int64, err error)
	// Wait returns once every message of the round has arrived.
	Wait(ctx context.Context) error
	// Recv returns the vectors neighbour from sent to node this round. It is
	// safe for concurrent use and does not allocate.
	Recv(node, from int) [][]float32
}

// RoundExchange is an [Exchange] that must know each round before its Sends:
// a transport between processes, which labels its messages with the round
// and waits for the messages its nodes' in-neighbours send. The optimizer
// calls BeginRound(t, W_t, shares) once per round, before the round's Sends:
// every node i it runs then receives shares vectors from each node of
// W_t.From(i), sent by Send(j, to, vecs) on whichever process runs j.
type RoundExchange interface {
	Exchange
	BeginRound(t int, w *graph.Mixing, shares int) error
}

// PipelinedExchange is a [RoundExchange] that can begin the next round
// while the current round's Recv calls still run, so that a node's vectors
// of round t+1 go out as soon as its round-t update is done, while the
// rank's other nodes still compute. Given a final round (see
// [Optimizer.SetFinalRound]), the optimizer calls BeginNextRound(t+1,
// W_{t+1}, shares) after round t's Wait returned and before round t's Recv
// calls; Recv goes on returning round t's vectors until round t+1's Wait
// returns, and round t+1's Sends come meanwhile, from the worker goroutines,
// concurrently with round t's Recv calls and with one another. Round t+1
// then has no BeginRound: its Wait and Recv calls follow as usual.
type PipelinedExchange interface {
	RoundExchange
	BeginNextRound(t int, w *graph.Mixing, shares int) error
}

// EncodedExchange is an [Exchange] that carries a compressing method's
// messages encoded, as the compressor wrote them, rather than as the p
// floats they decode to: a transport between processes then sends each
// neighbour the message's bytes (see [Optimizer.CompressionRatio]). For a
// method that compresses (CHOCO-SGD), the optimizer calls SendEncoded in
// place of Send; its other methods' vectors go through Send as before.
type EncodedExchange interface {
	Exchange
	// SetDecoder gives the exchange the function that turns a received
	// message into the p-float vector its sender applied (the decoded
	// message times the compressor's Scale, bit for bit the sender's);
	// it returns a one-line error for a malformed message and is safe for
	// concurrent use. [New] calls it once, for a compressing method,
	// before the first round.
	SetDecoder(decode func(dst []float32, msg []byte) error)
	// SendEncoded delivers node's encoded message of this round to each
	// node in to, and returns the bytes sent: len(msg) per recipient. Recv(i,
	// node) then returns one vector: the decoded message. Local recipients
	// may be served the sender's decoded vector dec directly. msg, dec and
	// to stay unchanged until the round's Recv calls are over.
	SendEncoded(node int, to []int, msg []byte, dec []float32) (int64, error)
}

// ScatterExchange is an [Exchange] that can send each neighbour its own
// vectors: a Byzantine node's messages, which differ per neighbour, travel
// through SendEach, and Recv(to[n], node) then returns vecs[n]. The
// optimizer never calls it: package robust's exchange decorator, which
// tells the lies, calls SendEach in place of Send for a Byzantine node, and
// a run whose nodes lie in their messages needs an exchange that has it.
type ScatterExchange interface {
	Exchange
	// SendEach delivers vecs[n], node's vectors for to[n], to each node of
	// to, and returns the bytes that took. Every vecs[n] holds as many
	// vectors as Send would, and vecs and to stay unchanged until the
	// round's Recv calls are over.
	SendEach(node int, to []int, vecs [][][]float32) (bytes int64, err error)
}

// ViewingExchange is an [Exchange], a decorator of another, that reads the
// vectors the optimizer's nodes share in a round before they are sent, not
// only those sent to it: package robust's omniscient attacks, whose
// Byzantine nodes lie from what their targets receive. [New] calls View
// once with a function that returns node i's k-th shared vector of the
// round in progress (its current row of the k-th slab its method shares),
// for the nodes the optimizer runs, from the round's first Send to its
// Wait. A method that compresses its messages takes no ViewingExchange.
type ViewingExchange interface {
	Exchange
	View(shared func(node, k int) []float32)
}

// MemExchange is the in-memory Exchange of a single process simulating all
// nodes: a sent vector is shared with the neighbours, not copied, and the
// bytes reported are those a network transport would send — every float to
// every neighbour, 4 bytes each.
type MemExchange struct {
	g    *graph.Graph
	sent [][][]float32 // sent[node] = the vectors node sent this round
	each []scattered   // each[node]: what node sent each neighbour, after SendEach
}

// scattered is a node's SendEach of the round: vecs[n] went to to[n].
type scattered struct {
	to   []int
	vecs [][][]float32
}

// NewMemExchange returns an in-memory exchange over g's edges.
func NewMemExchange(g *graph.Graph) *MemExchange {
	e := &MemExchange{g: g, sent: make([][][]float32, g.N)}
	for i := range e.sent {
		e.sent[i] = make([][]float32, 0, 2)
	}
	return e
}

// Send records node's vectors for the nodes in to to read.
func (e *MemExchange) Send(node int, to []int, vecs [][]float32) (int64, error) {
	if node < 0 || node >= e.g.N {
		return 0, fmt.Errorf("exchange: send from node %d of %d", node, e.g.N)
	}
	e.sent[node] = append(e.sent[node][:0], vecs...)
	if e.each != nil {
		e.each[node] = scattered{}
	}
	floats := 0
	for _, v := range vecs {
		floats += len(v)
	}
	return int64(floats) * 4 * int64(len(to)), nil
}

// Wait returns ctx's error, if any: in memory every message has arrived when
// Send returns.
func (e *MemExchange) Wait(ctx context.Context) error { return ctx.Err() }

// SendEach records node's vectors for each node of to to read.
func (e *MemExchange) SendEach(node int, to []int, vecs [][][]float32) (int64, error) {
	if node < 0 || node >= e.g.N {
		return 0, fmt.Errorf("exchange: send from node %d of %d", node, e.g.N)
	}
	if len(vecs) != len(to) {
		return 0, fmt.Errorf("exchange: node %d sends %d messages to %d nodes", node, len(vecs), len(to))
	}
	if e.each == nil {
		e.each = make([]scattered, e.g.N)
	}
	e.each[node] = scattered{to, vecs}
	e.sent[node] = e.sent[node][:0]
	var floats int64
	for _, msg := range vecs {
		for _, v := range msg {
			floats += int64(len(v))
		}
	}
	return floats * 4, nil
}

// Recv returns the vectors from sent node this round.
func (e *MemExchange) Recv(node, from int) [][]float32 {
	if e.each != nil && e.each[from].vecs != nil {
		return scatteredTo(e.each[from].to, e.each[from].vecs, node)
	}
	return e.sent[from]
}

// scatteredTo returns vecs[n] for to[n] = node, or nil.
func scatteredTo(to []int, vecs [][][]float32, node int) [][]float32 {
	if n := slices.Index(to, node); n >= 0 {
		return vecs[n]
	}
	return nil
}
