package train

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"hash/crc32"
	"os"

	"github.com/gtstorm/gtstorm/internal/atomicfile"
)

// metricsLog is metrics.csv open for appending: each evaluation appends one
// row, so that writing the metrics costs the same at every round however
// long the history. A checkpoint records the log's length and CRC-32C
// (metricsMark) instead of the rows; resuming cuts the file back to that
// mark, which drops the rows of rounds after the checkpoint and a torn last
// line alike.
type metricsLog struct {
	path string
	f    *os.File
	mark metricsMark
}

// metricsMark is a prefix of metrics.csv: its rows, byte length and CRC-32C.
type metricsMark struct {
	Rows  int    `json:"rows"`
	Bytes int64  `json:"bytes"`
	CRC   uint32 `json:"crc32c"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// createMetrics writes path with the header and rows (atomically) and opens
// it for appending.
func createMetrics(path string, rows []Row) (*metricsLog, error) {
	b := csvBytes(rows)
	if err := atomicfile.WriteBytes(path, b); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &metricsLog{path: path, f: f, mark: metricsMark{Rows: len(rows), Bytes: int64(len(b)), CRC: crc32.Checksum(b, castagnoli)}}, nil
}

// readMetricsPrefix reads the rows of path up to mark, checking that the
// file still holds exactly what the mark recorded.
func readMetricsPrefix(path string, mark metricsMark) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("metrics of the checkpoint: %w", err)
	}
	defer f.Close()
	b := make([]byte, mark.Bytes)
	if n, err := f.ReadAt(b, 0); int64(n) != mark.Bytes {
		return nil, fmt.Errorf("%s: %d bytes, the checkpoint recorded %d (%v); the metrics of the run are lost", path, n, mark.Bytes, err)
	}
	if c := crc32.Checksum(b, castagnoli); c != mark.CRC {
		return nil, fmt.Errorf("%s: its first %d bytes changed since the checkpoint (CRC-32C %08x, recorded %08x)", path, mark.Bytes, c, mark.CRC)
	}
	rows, err := ReadCSV(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) != mark.Rows {
		return nil, fmt.Errorf("%s: %d rows, the checkpoint recorded %d", path, len(rows), mark.Rows)
	}
	return rows, nil
}

// append writes one row at the end of the log.
func (l *metricsLog) append(r Row) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(r.record())
	w.Flush()
	if _, err := l.f.Write(b.Bytes()); err != nil {
		l.f.Truncate(l.mark.Bytes) // leave no torn row behind (a full disk)
		return fmt.Errorf("write %s: %w", l.path, err)
	}
	l.mark.Rows++
	l.mark.Bytes += int64(b.Len())
	l.mark.CRC = crc32.Update(l.mark.CRC, castagnoli, b.Bytes())
	return nil
}

// sync makes the rows written so far durable and returns their mark.
func (l *metricsLog) sync() (metricsMark, error) {
	if err := l.f.Sync(); err != nil {
		return metricsMark{}, fmt.Errorf("sync %s: %w", l.path, err)
	}
	return l.mark, nil
}

func (l *metricsLog) close() error { return l.f.Close() }
