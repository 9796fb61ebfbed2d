package webfarm

import "strconv"

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
