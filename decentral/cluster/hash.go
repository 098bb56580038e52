package cluster

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ConfigHash returns a hash of a run's settings v (a struct, a map or a
// json.RawMessage) that ranks compare to find out whether they were
// started with the same settings: the first 16 bytes, in hex, of the
// SHA-256 of v's canonical JSON (object keys sorted, numbers in one form,
// so 1, 1.0 and 1e0 are alike), with the keys in omit left out. Omit the
// settings that do not change results, such as "workers" or "max_memory";
// a key "a.b" leaves out b inside the object a.
func ConfigHash(v any, omit ...string) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("config hash: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return "", fmt.Errorf("config hash: %w", err)
	}
	for _, key := range omit {
		drop(tree, strings.Split(key, "."))
	}
	canon, err := json.Marshal(canonical(tree))
	if err != nil {
		return "", fmt.Errorf("config hash: %w", err)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:16]), nil
}

// drop removes the key path from the object tree, if it is there.
func drop(tree any, path []string) {
	obj, ok := tree.(map[string]any)
	if !ok {
		return
	}
	if len(path) == 1 {
		delete(obj, path[0])
		return
	}
	drop(obj[path[0]], path[1:])
}

// canonical rewrites the numbers of a decoded tree in one form: integers
// as their digits, other numbers as strconv's shortest 'g' form.
// json.Marshal sorts the keys of maps.
func canonical(tree any) any {
	switch t := tree.(type) {
	case map[string]any:
		for k, v := range t {
			t[k] = canonical(v)
		}
	case []any:
		for i, v := range t {
			t[i] = canonical(v)
		}
	case json.Number:
		s := t.String()
		if !strings.ContainsAny(s, ".eE") {
			if s == "-0" {
				return json.Number("0")
			}
			return t
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return t
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return json.Number(strconv.FormatInt(int64(f), 10))
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	}
	return tree
}
