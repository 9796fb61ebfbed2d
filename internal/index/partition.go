package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// MaxPartitions caps Options.Partitions.
const MaxPartitions = 64

// Partition layout. An index of one partition is a bleve index in the
// directory itself (as every index written before partitions). An index
// of n > 1 partitions has
//
//	DIR/partitions.json   {"partitions": n}
//	DIR/p0 ... DIR/p<n-1> one bleve index and its versions sidecar each
//
// A document lives in partition fnv32a(DocID) mod n; the number is fixed
// when the index is created (a different Options.Partitions later is
// ignored: the documents would be in the wrong partitions).
const partitionsFile = "partitions.json"

type partitionsMeta struct {
	Partitions int `json:"partitions"`
}

// partitionDirs returns the directories of the partitions of the index in
// dir, writing partitions.json when it creates an index of several.
func partitionDirs(dir string, opts Options) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, partitionsFile))
	switch {
	case err == nil:
		var m partitionsMeta
		if err := json.Unmarshal(raw, &m); err != nil || m.Partitions < 2 || m.Partitions > MaxPartitions {
			return nil, fmt.Errorf("index: %s: bad %s", dir, partitionsFile)
		}
		return partDirs(dir, m.Partitions), nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("index: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "index_meta.json")); err == nil {
		return []string{dir}, nil // one partition
	}
	n := min(max(opts.Partitions, 1), MaxPartitions)
	if n == 1 || !opts.Create || opts.ReadOnly {
		return []string{dir}, nil // openPart creates it, or says there is none
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	raw, _ = json.Marshal(partitionsMeta{Partitions: n})
	tmp := filepath.Join(dir, partitionsFile+".tmp")
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, partitionsFile)); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	return partDirs(dir, n), nil
}

func partDirs(dir string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = filepath.Join(dir, "p"+strconv.Itoa(i))
	}
	return out
}

// Partitions returns the number of partitions of the index.
func (ix *Index) Partitions() int { return len(ix.parts) }

// partOf returns the partition of document id.
func (ix *Index) partOf(id string) *part {
	return ix.parts[partIndex(id, len(ix.parts))]
}

// partIndex is the partition of document id among n.
func partIndex(id string, n int) int {
	if n == 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % uint32(n))
}

// Apply applies ops in order, idempotently (see Op.Version), and returns
// once the changes are persisted. If it fails, none or some of the ops may
// have been applied; applying them again is safe. The ops of each
// partition are applied in parallel.
func (ix *Index) Apply(ctx context.Context, ops []Op) (ApplyResult, error) {
	ix.mu.Lock()
	closed := ix.closed
	ix.mu.Unlock()
	if closed {
		return ApplyResult{}, ErrClosed
	}
	if len(ix.parts) == 1 {
		return ix.parts[0].apply(ctx, ops)
	}
	byPart := make([][]Op, len(ix.parts))
	for _, op := range ops {
		i := partIndex(DocID(op.Doc.Collection, op.Doc.URL), len(ix.parts))
		byPart[i] = append(byPart[i], op)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		res  ApplyResult
		errs []error
	)
	for i, pops := range byPart {
		if len(pops) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := ix.parts[i].apply(ctx, pops)
			mu.Lock()
			defer mu.Unlock()
			res.Applied += r.Applied
			res.Skipped += r.Skipped
			res.NoDocument += r.NoDocument
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return ApplyResult{}, err
	}
	return res, nil
}
