package webanalyzer

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Rank is one analysed URL: its static rank (PageRank, the ranks of all
// analysed URLs summing to 1) and its site's rank (the sum of the static
// ranks of the site's analysed URLs).
type Rank struct {
	URL      string
	Static   float64
	SiteRank float64
}

// readTable calls fn with the fields of each record of a table file.
func readTable(path string, fn func(f []string) error) error {
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if err := fn(strings.Split(sc.Text(), " ")); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("webanalyzer: %s: %w", path, err)
	}
	return nil
}

// Ranks reads the last run's results from a state directory, highest
// static rank first (then by URL).
func Ranks(state string) ([]Rank, error) {
	urlOf := map[string]string{}
	err := readTable(filepath.Join(state, Compacted(TableURIMap)), func(f []string) error {
		if len(f) >= 2 {
			urlOf[f[0]] = f[1]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	site := map[string]float64{}
	err = readTable(filepath.Join(state, OutSiteRank), func(f []string) error {
		if len(f) >= 2 {
			v, _ := strconv.ParseFloat(f[1], 64)
			site[f[0]] = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []Rank
	total := 0.0
	err = readTable(filepath.Join(state, OutRank), func(f []string) error {
		if len(f) < 2 {
			return fmt.Errorf("webanalyzer: %s: short record %q", OutRank, strings.Join(f, " "))
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return fmt.Errorf("webanalyzer: %s: %w", OutRank, err)
		}
		u, ok := urlOf[f[0]]
		if !ok {
			u = "urlhash:" + f[0]
		}
		total += v
		out = append(out, Rank{URL: u, Static: v, SiteRank: site[f[0]]})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if total > 0 {
		for i := range out {
			out[i].Static /= total
			out[i].SiteRank /= total
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Static != out[j].Static {
			return out[i].Static > out[j].Static
		}
		return out[i].URL < out[j].URL
	})
	return out, nil
}
