package webfarm

import (
	"strconv"
	"strings"
)

// DuplicateGroup says which documents of the farm share their text, the
// contract for duplicate detection: the exact duplicates of item N of a
// host (/dup/N/0..2.html and the three /q/N query orders) form the group
// "dup:<host>:N", and its near duplicates (/near/N/0..2.html: the same
// prose with four words replaced in 1.html and four others in 2.html, about
// 130 words each, so any two of them share roughly 80% of their word
// 3-shingles) form "near:<host>:N". A correct crawl records, in each group
// it fetched, exactly one document as the original and every other as a
// duplicate of a document of the same group; under exact (MD5) detection
// the near group's three documents are all distinct. ok is false for every
// other URL: no other document of the farm is a duplicate of anything.
func (f *Farm) DuplicateGroup(rawURL string) (group string, near, ok bool) {
	h, path, query, err := f.split(rawURL)
	if err != nil {
		return "", false, false
	}
	r := f.resolve(h, path, query, int(f.cycle.Load()))
	switch r.kind {
	case rDup, rQuery:
		return "dup:" + strconv.Itoa(h) + ":" + strconv.Itoa(r.id), false, true
	case rNear:
		return "near:" + strconv.Itoa(h) + ":" + strconv.Itoa(r.id), true, true
	}
	return "", false, false
}

// Stored is what a crawl recorded about one fetched document, for
// CheckDuplicates: Owner is set when the crawl took it for a duplicate.
type Stored struct {
	URI, Owner string
}

// CheckDuplicates checks a crawl's fetched documents against the
// DuplicateGroup contract, near duplicates counted as duplicates only when
// near is set (near_duplicate_detection): in each group exactly one
// document is an original and every other one a duplicate of a document of
// its group, and no document outside a group is a duplicate. It returns
// the violations (nil when none), the number of groups seen and the number
// of near duplicates recorded as duplicates.
func (f *Farm) CheckDuplicates(docs []Stored, near bool) (problems []string, groups, nearDups int) {
	groupOf := func(uri string) (string, bool) {
		g, isNear, ok := f.DuplicateGroup(uri)
		if !ok || (isNear && !near) {
			return "", false
		}
		return g, true
	}
	originals := map[string][]string{}
	for _, d := range docs {
		g, inGroup := groupOf(d.URI)
		if d.Owner == "" {
			if inGroup {
				originals[g] = append(originals[g], d.URI)
			}
			continue
		}
		if _, isNear, _ := f.DuplicateGroup(d.URI); isNear {
			nearDups++
		}
		og, ok := groupOf(d.Owner)
		switch {
		case !inGroup:
			problems = append(problems, d.URI+" recorded as a duplicate of "+d.Owner+": the farm has no duplicate of it")
		case !ok || og != g:
			problems = append(problems, d.URI+" recorded as a duplicate of "+d.Owner+", outside its group "+g)
		}
	}
	for g, o := range originals {
		if len(o) != 1 {
			problems = append(problems, "group "+g+": "+strconv.Itoa(len(o))+" originals "+strings.Join(o, " ")+", want 1")
		}
	}
	return problems, len(originals), nearDups
}
