package transport

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
)

// Multicast. A node that sends the same vectors (or encoded message) to
// several nodes of one remote rank — Send and SendEncoded, never SendEach —
// sends them once: a job naming the destinations goes on the node's
// multicast queue for that rank, an edge of its own (multi, keyed by
// multiRank) that the link's writer sends as the edges' queues are, as
// MULTI (MULTIENC) frames whose payload starts with the destination list.
// The receiving rank checks the list and fans each frame out, as the DATA
// (ENCODED) frame it stands for, to each destination's edge (fanOut), so
// that the per-edge checks, repeats dropped, accounting and Recv are those
// of a frame per edge. The bytes Send returns are unchanged: 4 × floats ×
// len(to); Stats count a multicast payload once, as it crosses the network.

// multiRank marks the remote half of a multicast queue's key: its edge is
// keyed by (local node, multiRank | rank), which names no node.
const multiRank = 1 << 31

// maxDestBytes bounds a multicast frame's destination list, so that its
// frames fit a message whatever the chunk size; a job for more
// destinations travels edge by edge.
const maxDestBytes = maxChunkBytes / 4

// queueSameLocked queues j, the same job for every node of to, for the
// nodes of to on other ranks: once per remote rank, on node's multicast
// queue for the rank with the list of its destinations where it has two or
// more, else on the one edge's queue. It wakes the writers.
func (x *Exchange) queueSameLocked(node int, to []int, j job) {
	if len(x.byRank) != len(x.cfg.Addrs) {
		x.byRank = make([][]int, len(x.cfg.Addrs))
	}
	byRank := x.byRank
	for _, d := range to {
		if r := x.owner[d]; r != x.cfg.Rank {
			byRank[r] = append(byRank[r], d)
		}
	}
	for r, dests := range byRank {
		if len(dests) == 0 {
			continue
		}
		var e *edge
		jj := j
		if len(dests) == 1 || 4*len(dests) > maxDestBytes {
			for _, d := range dests {
				e = x.edgeLocked(node, d)
				e.queue = append(e.queue, jj)
				x.outPending++
			}
		} else {
			e = x.multiLocked(node, r)
			if !slices.Equal(e.dests, dests) { // a new graph: jobs of the old keep their list
				e.dests = slices.Clone(dests)
			}
			jj.dests = e.dests
			e.queue = append(e.queue, jj)
			x.outPending++
		}
		e.wakeWriter()
		byRank[r] = dests[:0]
	}
}

// multiLocked returns node's multicast queue for rank, making it (and the
// link with rank) the first time.
func (x *Exchange) multiLocked(node, rank int) *edge {
	key := edgeKey(node, multiRank|rank)
	if e := x.edges[key]; e != nil {
		return e
	}
	l := x.linkLocked(rank)
	e := &edge{
		local: node, remote: -1, rank: rank, link: l, att: l.att, multi: true,
		expect: [2]int64{-1, -1}, partRound: -1, in: [2]inbox{{round: -1}, {round: -1}},
	}
	l.edges = append(l.edges, e)
	x.emu.Lock()
	x.edges[key] = e
	x.emu.Unlock()
	return e
}

// chunkOf returns the floats (bytes, encoded) of j's frames: the
// Exchange's chunk, or less for a multicast frame, so that its destination
// list and chunk fit a message.
func (x *Exchange) chunkOf(j job) int {
	unit := 4
	if j.encoded {
		unit = 1
	}
	c := x.chunk * 4 / unit
	if len(j.dests) > 0 {
		c = max(1, min(c, (maxChunkBytes-4*len(j.dests))/unit))
	}
	return c
}

// appendChunkRecord appends a frame of h carrying floats (or, encoded,
// raw) as a record: to h.To, or, when dests is not nil, a multicast frame
// to the nodes of dests.
func appendChunkRecord(b []byte, h wire.Header, dests []int, floats []float32, raw []byte) []byte {
	switch {
	case dests == nil && h.Kind == wire.Encoded:
		return appendBytesRecord(b, h, raw)
	case dests == nil:
		return appendFloatRecord(b, h, floats)
	case h.Kind == wire.Encoded:
		h.Kind = wire.MultiEncoded
	default:
		h.Kind = wire.Multi
	}
	at := len(b)
	b = wire.AppendMulti(append(b, 0, 0, 0, 0), h, dests, floats, raw)
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-recordPrefix))
	return b
}

// fanIn is what a link's reader keeps to fan multicast frames out: it is
// touched only by the link's one reader.
type fanIn struct {
	dests   []int
	seen    []bool    // by node, false between frames
	payload []byte    // the frame's chunk, as it came
	floats  []float32 // a MULTI frame's chunk
	bufs    [1][]byte
	r       msgReader  // reads payload, for each destination
	edges   []*edge    // the destinations' edges that took the frame
	byFrom  [][]*edge  // by sending node: the edges of its last list, which its next most likely repeats
	ds      []delivery // and where their data goes
}

// fanOut delivers a MULTI or MULTIENC frame f, which arrived on attachment
// a of link l, to each of its destinations' edges as the DATA or ENCODED
// frame it stands for would be, with deliver's three steps for all of them
// at once: admitted under one hold of the lock (admitFanLocked), copied
// without it (copyFan), counted under it again (accountFanLocked). Its
// destination list must name nodes of this rank, each once (readDests),
// and each must expect the sender's vectors in the frame's round, which
// admitLocked checks as it does a frame per edge; any other list fails
// the Exchange.
func (x *Exchange) fanOut(l *link, a *attachment, f *frameIn) error {
	fi := &l.fan
	from := int(f.h.From)
	if err := x.readDests(l, fi, f); err != nil {
		return err
	}
	one, err := x.readFanPayload(fi, f)
	if err != nil {
		return err
	}
	x.mu.Lock()
	err = x.admitFanLocked(l, a, fi, from, &one)
	x.mu.Unlock()
	if err != nil || len(fi.ds) == 0 {
		return err // a fault, or a repeat, or nothing takes it
	}
	err = x.copyFan(fi, one.h.Kind == wire.Encoded)
	// The payload crossed the network once, and counts once.
	x.bytesRecv.Add(int64(one.n))
	x.mu.Lock()
	defer x.mu.Unlock()
	if err != nil {
		x.failLocked(err)
		return err
	}
	for i, e := range fi.edges {
		x.filledLocked(e, &fi.ds[i])
	}
	x.heardLocked(l.rank)
	return nil
}

// readDests reads the destination list of multicast frame f of link l
// into fi.dests and checks it: the sender is a node of l's peer, and the
// list names nodes of this rank, each once.
func (x *Exchange) readDests(l *link, fi *fanIn, f *frameIn) error {
	from, nd := int(f.h.From), int(f.h.To)
	if from >= x.cfg.Nodes || x.owner[from] != l.rank {
		return x.badLink(l, "a %s frame from node %d: node %d is not rank %d's", f.h.Kind, from, from, l.rank)
	}
	if nd > len(x.local) {
		return x.badFan(from, f, "%d destinations, but rank %d runs %d nodes", nd, x.cfg.Rank, len(x.local))
	}
	if fi.seen == nil {
		fi.seen = make([]bool, x.cfg.Nodes)
	}
	var b [4]byte
	fi.dests = fi.dests[:0]
	for range nd {
		f.r.read(b[:])
		fi.dests = append(fi.dests, int(binary.LittleEndian.Uint32(b[:])))
	}
	err := x.checkDests(fi, from, f)
	for _, d := range fi.dests {
		if d >= 0 && d < len(fi.seen) {
			fi.seen[d] = false
		}
	}
	return err
}

// readFanPayload reads the chunk of multicast frame f, after its
// destination list, into fi (a MULTI frame's also as floats, checked
// finite), and returns the DATA or ENCODED frame it stands for, whose
// To each destination sets.
func (x *Exchange) readFanPayload(fi *fanIn, f *frameIn) (frameIn, error) {
	nd := int(f.h.To)
	n := f.n - 4*nd
	fi.payload = slices.Grow(fi.payload[:0], n)[:n]
	f.r.read(fi.payload)
	one := frameIn{h: f.h, r: &fi.r, n: n}
	one.h.Kind = f.h.Kind.Unicast()
	if one.h.Kind != wire.Encoded {
		fi.floats = slices.Grow(fi.floats[:0], n/4)[:n/4]
		wire.CopyFloats(fi.floats, fi.payload)
		if err := wire.CheckFinite(fi.floats, f.h.Offset); err != nil {
			return one, x.badFan(int(f.h.From), f, "%d destinations with a bad chunk: %w", nd, err)
		}
	}
	fi.bufs[0] = fi.payload
	return one, nil
}

// admitFanLocked admits frame one, from node from, into the edge of each
// destination of fi.dests as admitLocked does, and lists in fi.edges and
// fi.ds the edges that take it and where its data goes. It holds x.mu.
func (x *Exchange) admitFanLocked(l *link, a *attachment, fi *fanIn, from int, one *frameIn) error {
	fi.edges, fi.ds = fi.edges[:0], fi.ds[:0]
	for i, e := range x.destEdgesLocked(fi, from) {
		fi.r = msgReader{bufs: fi.bufs[:], left: one.n}
		one.h.To = uint32(fi.dests[i])
		fi.ds = append(fi.ds, delivery{})
		take, err := x.admitLocked(l, e, a, one, &fi.ds[len(fi.ds)-1])
		if err != nil {
			return err
		}
		if !take {
			fi.ds = fi.ds[:len(fi.ds)-1]
			continue
		}
		fi.edges = append(fi.edges, e)
	}
	return nil
}

// copyFan copies the chunk fi holds into the room admitFanLocked made in
// each edge that took it, without the lock, and decodes an encoded
// message (enc) once its last chunk is in. It returns the first decoding
// error, having copied every chunk.
func (x *Exchange) copyFan(fi *fanIn, enc bool) error {
	var err error
	for i := range fi.ds {
		d := &fi.ds[i]
		if !enc {
			copy(d.vec[d.off:], fi.floats)
			continue
		}
		copy(d.raw[d.off:], fi.payload)
		if err == nil {
			err = x.decodeIn(fi.edges[i], d)
		}
	}
	return err
}

// destEdgesLocked returns the edges from node from to the nodes of
// fi.dests, in order: those of from's last list where it is the same.
func (x *Exchange) destEdgesLocked(fi *fanIn, from int) []*edge {
	if fi.byFrom == nil {
		fi.byFrom = make([][]*edge, x.cfg.Nodes)
	}
	es := fi.byFrom[from]
	same := len(es) == len(fi.dests)
	for i := 0; same && i < len(es); i++ {
		same = es[i].local == fi.dests[i]
	}
	if !same {
		es = es[:0]
		for _, d := range fi.dests {
			es = append(es, x.edgeLocked(d, from))
		}
		fi.byFrom[from] = es
	}
	return es
}

// checkDests checks the destination list of multicast frame f from node
// from, marking each destination in fi.seen.
func (x *Exchange) checkDests(fi *fanIn, from int, f *frameIn) error {
	for _, d := range fi.dests {
		switch {
		case d >= x.cfg.Nodes || x.owner[d] != x.cfg.Rank:
			return x.badFan(from, f, "node %d as a destination, which rank %d does not run", d, x.cfg.Rank)
		case fi.seen[d]:
			return x.badFan(from, f, "node %d twice as a destination", d)
		}
		fi.seen[d] = true
	}
	return nil
}

// badFan fails the Exchange on multicast frame f of node from, whose
// destination list is at fault as format says.
func (x *Exchange) badFan(from int, f *frameIn, format string, args ...any) error {
	err := fmt.Errorf("transport: rank %d: %s sent a %s frame of round %d naming "+format,
		append([]any{x.cfg.Rank, x.who(from), f.h.Kind, f.h.Round}, args...)...)
	x.fail(err)
	return err
}
