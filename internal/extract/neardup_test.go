package extract

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// prose returns n words drawn from a 300-word vocabulary.
func prose(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	w := make([]string, n)
	for i := range w {
		w[i] = "w" + string(rune('a'+r.IntN(20))) + string(rune('a'+r.IntN(15)))
	}
	return w
}

func shared(a, b [][16]byte) int {
	n := 0
	for i := range a {
		if a[i] == b[i] {
			n++
		}
	}
	return n
}

func TestNearKeys(t *testing.T) {
	keys := func(words []string) [][16]byte {
		return NearKeys(&Result{Text: strings.Join(words, " ")}, false, 0)
	}
	t.Run("near duplicates share a band", func(t *testing.T) {
		for seed := uint64(0); seed < 200; seed++ {
			a := prose(seed, 130)
			b := append([]string(nil), a...)
			for _, i := range []int{5, 40, 77, 110} { // 4 words of 130 replaced
				b[i] = "changed" + b[i]
			}
			if shared(keys(a), keys(b)) == 0 {
				t.Errorf("seed %d: no shared band key", seed)
			}
		}
	})
	t.Run("unrelated documents share none", func(t *testing.T) {
		for seed := uint64(0); seed < 200; seed++ {
			if n := shared(keys(prose(seed, 130)), keys(prose(seed+1000, 130))); n != 0 {
				t.Errorf("seed %d: %d shared band keys", seed, n)
			}
		}
	})
	t.Run("case and punctuation do not matter", func(t *testing.T) {
		a := NearKeys(&Result{Text: "The quick brown fox, jumps over the lazy dog."}, false, 0)
		b := NearKeys(&Result{Text: "the QUICK brown fox jumps   over the lazy dog"}, false, 0)
		if shared(a, b) != NearBands {
			t.Errorf("shared %d of %d", shared(a, b), NearBands)
		}
	})
	t.Run("no words no keys", func(t *testing.T) {
		if k := NearKeys(&Result{Text: " ,.; "}, false, 0); k != nil {
			t.Errorf("keys %v", k)
		}
	})
	t.Run("short texts", func(t *testing.T) {
		a, b := NearKeys(&Result{Text: "hello world"}, false, 0), NearKeys(&Result{Text: "world hello"}, false, 0)
		if len(a) != NearBands || shared(a, b) != 0 {
			t.Errorf("len %d, shared %d", len(a), shared(a, b))
		}
	})
	t.Run("cut off and meta", func(t *testing.T) {
		r := &Result{Text: "alpha beta gamma delta", Meta: []Meta{{Name: "k", Content: "v"}}}
		if shared(NearKeys(r, true, 0), NearKeys(r, false, 0)) == NearBands {
			t.Error("meta tags ignored")
		}
		if shared(NearKeys(r, false, 16), NearKeys(&Result{Text: "alpha beta gamma"}, false, 0)) != NearBands {
			t.Error("cut off ignored")
		}
	})
}

func FuzzNearKeys(f *testing.F) {
	f.Add("The quick brown fox")
	f.Add("\xff\xfe a b")
	f.Fuzz(func(t *testing.T, s string) {
		k := NearKeys(&Result{Text: s}, false, 7)
		if k != nil && len(k) != NearBands {
			t.Fatalf("len %d", len(k))
		}
	})
}
