package index

import (
	"context"
	"fmt"
	"html"
	"sort"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/trawl/trawl/internal/clicks"
)

// MaxPageSize caps SearchOptions.Size; MaxFrom caps SearchOptions.From.
const (
	MaxPageSize = 100
	MaxFrom     = 10000
)

// Field boosts: a word in the title counts three times, in anchor text twice.
var fieldBoosts = []struct {
	field string
	boost float64
}{{FieldTitle, 3}, {FieldAnchor, 2}, {FieldBody, 1}}

// ProximityWeight is how much more a hit of the rerank window scores when
// the query's words stand next to each other in it: its score is
// multiplied by 1 + ProximityWeight*k/(n-1), k of the n-1 pairs of
// consecutive query words found as phrases (MaxProximityPairs at most).
const (
	ProximityWeight   = 2
	MaxProximityPairs = 8
)

// SearchOptions narrow and page a search.
type SearchOptions struct {
	// Collection, if set, keeps only that content collection.
	Collection string
	// Site and Type add a site: and a type: filter.
	Site, Type string
	// From is the number of hits to skip; Size the page size (default 10,
	// at most MaxPageSize).
	From, Size int
	// Facets asks for the top sites and types of the matching documents.
	Facets bool
}

// Hit is one search result.
type Hit struct {
	URL   string  `json:"url"`
	Title string  `json:"title"`
	Score float64 `json:"score"`
	// TitleHTML and Snippet are HTML-escaped text with the query terms in
	// <mark> elements.
	TitleHTML  string    `json:"title_html"`
	Snippet    string    `json:"snippet"`
	Site       string    `json:"site"`
	MIME       string    `json:"mime"`
	Type       string    `json:"type"`
	Collection string    `json:"collection"`
	Modified   time.Time `json:"modified,omitzero"`
	Rank       float64   `json:"rank"`
	// ClickURL is the result's link through the click redirect, when the
	// search was logged (HandlerOptions.Clicks).
	ClickURL string `json:"click_url,omitempty"`
}

// Facet is one value of a facet with its document count.
type Facet struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// Results is a page of search results.
type Results struct {
	Query string `json:"query"`
	// Parsed is the query as understood (see Query.String).
	Parsed string        `json:"parsed"`
	Total  uint64        `json:"total"`
	From   int           `json:"from"`
	Size   int           `json:"size"`
	Hits   []Hit         `json:"hits"`
	Sites  []Facet       `json:"sites,omitempty"`
	Types  []Facet       `json:"types,omitempty"`
	Took   time.Duration `json:"took_ns"`
	// QueryID identifies the search in the click log, when it was logged.
	QueryID string `json:"query_id,omitempty"`
}

// Search runs a query in the query language of ParseQuery.
func (ix *Index) Search(ctx context.Context, q string, o SearchOptions) (*Results, error) {
	start := time.Now()
	pq, o := PrepareQuery(q, o)
	res := &Results{Query: q, Parsed: pq.String(), From: o.From, Size: o.Size, Hits: []Hit{}}
	if pq.Empty() {
		res.Took = time.Since(start)
		return res, nil
	}
	bq := buildQuery(pq, o.Collection)

	// Phase 1: the ordering. The best RerankWindow hits by text score are
	// re-sorted by score*(1+rank)*click boost; beyond the window the text
	// order holds.
	window := ix.opts.RerankWindow
	fields := []string{FieldRank}
	clickBoost := func(*search.DocumentMatch) float64 { return 1 }
	if rel := ix.opts.Clicks.For(ClickQuery(q, o)); len(rel) > 0 {
		fields = append(fields, FieldURL)
		clickBoost = func(h *search.DocumentMatch) float64 {
			return rel[clicks.NormalizeURL(str(h.Fields[FieldURL]))].Boost()
		}
	}
	var ids []string
	var scores []float64
	var ranks []float64
	if o.From < window {
		req := bleve.NewSearchRequestOptions(bq, window, 0, false)
		req.Fields = fields
		addFacets(req, o.Facets)
		r, err := ix.search.SearchInContext(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("index: search: %w", err)
		}
		res.Total = r.Total
		facets(res, r)
		type scored struct {
			id          string
			score, rank float64
		}
		near, err := ix.proximity(ctx, pq.Words, r.Hits)
		if err != nil {
			return nil, err
		}
		all := make([]scored, len(r.Hits))
		for i, h := range r.Hits {
			rank := num(h.Fields[FieldRank])
			all[i] = scored{h.ID, h.Score * (1 + rank) * clickBoost(h) * near[h.ID], rank}
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
		for i := o.From; i < len(all) && i < o.From+o.Size; i++ {
			ids = append(ids, all[i].id)
			scores = append(scores, all[i].score)
			ranks = append(ranks, all[i].rank)
		}
		if o.From+o.Size > window && len(all) == window {
			// The page straddles the window: the rest in text order.
			req := bleve.NewSearchRequestOptions(bq, o.From+o.Size-max(window, o.From), window, false)
			req.Fields = fields
			r, err := ix.search.SearchInContext(ctx, req)
			if err != nil {
				return nil, fmt.Errorf("index: search: %w", err)
			}
			for _, h := range r.Hits {
				rank := num(h.Fields[FieldRank])
				ids = append(ids, h.ID)
				scores = append(scores, h.Score*(1+rank)*clickBoost(h))
				ranks = append(ranks, rank)
			}
		}
	} else {
		req := bleve.NewSearchRequestOptions(bq, o.Size, o.From, false)
		req.Fields = fields
		addFacets(req, o.Facets)
		r, err := ix.search.SearchInContext(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("index: search: %w", err)
		}
		res.Total = r.Total
		facets(res, r)
		for _, h := range r.Hits {
			rank := num(h.Fields[FieldRank])
			ids = append(ids, h.ID)
			scores = append(scores, h.Score*(1+rank)*clickBoost(h))
			ranks = append(ranks, rank)
		}
	}
	if len(ids) == 0 {
		res.Took = time.Since(start)
		return res, nil
	}

	// Phase 2: the page's stored fields and highlighted fragments.
	page := query.NewConjunctionQuery([]query.Query{query.NewDocIDQuery(ids), bq})
	req := bleve.NewSearchRequestOptions(page, len(ids), 0, false)
	req.Fields = []string{FieldURL, FieldTitle, FieldSummary, FieldSite, FieldMIME, FieldType, FieldCollection, FieldModified}
	req.Highlight = bleve.NewHighlightWithStyle("html")
	req.Highlight.Fields = []string{FieldTitle, FieldBody}
	r, err := ix.search.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("index: search: %w", err)
	}
	byID := make(map[string]*search.DocumentMatch, len(r.Hits))
	for _, h := range r.Hits {
		byID[h.ID] = h
	}
	for i, id := range ids {
		h, ok := byID[id]
		if !ok {
			continue // removed between the two phases
		}
		res.Hits = append(res.Hits, makeHit(h, scores[i], ranks[i]))
	}
	res.Took = time.Since(start)
	return res, nil
}

// ClickQuery is the query as the click log records it (the search page's
// site and type fields as filters, so that filter_old_queries drops it):
// the key of the click relevance at query time.
func ClickQuery(q string, o SearchOptions) string {
	if o.Site != "" {
		q += " site:" + o.Site
	}
	if o.Type != "" {
		q += " type:" + o.Type
	}
	return q
}

// proximity returns, for each of hits, the factor of ProximityWeight (1 for
// a hit whose words are never next to each other, and for every hit of a
// query of fewer than two words). bleve 2.5's phrases have no slop, so
// closeness is adjacency: each pair of consecutive words is searched as a
// phrase (in the title, anchor text or body) among the hits.
func (ix *Index) proximity(ctx context.Context, words []string, hits search.DocumentMatchCollection) (map[string]float64, error) {
	out := make(map[string]float64, len(hits))
	ids := make([]string, len(hits))
	for i, h := range hits {
		out[h.ID] = 1
		ids[i] = h.ID
	}
	pairs := min(len(words)-1, MaxProximityPairs)
	if pairs < 1 || len(ids) == 0 {
		return out, nil
	}
	for i := 0; i < pairs; i++ {
		d := query.NewDisjunctionQuery(nil)
		for _, fb := range fieldBoosts {
			m := query.NewMatchPhraseQuery(words[i] + " " + words[i+1])
			m.SetField(fb.field)
			d.AddQuery(m)
		}
		req := bleve.NewSearchRequestOptions(query.NewConjunctionQuery([]query.Query{query.NewDocIDQuery(ids), d}), len(ids), 0, false)
		req.Score = "none"
		r, err := ix.search.SearchInContext(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("index: search: %w", err)
		}
		for _, h := range r.Hits {
			out[h.ID] += ProximityWeight / float64(pairs)
		}
	}
	return out, nil
}

func addFacets(req *bleve.SearchRequest, on bool) {
	if !on {
		return
	}
	req.AddFacet(FieldSite, bleve.NewFacetRequest(FieldSite, 10))
	req.AddFacet(FieldType, bleve.NewFacetRequest(FieldType, 10))
}

func facets(res *Results, r *bleve.SearchResult) {
	for name, dst := range map[string]*[]Facet{FieldSite: &res.Sites, FieldType: &res.Types} {
		f, ok := r.Facets[name]
		if !ok || f.Terms == nil {
			continue
		}
		for _, t := range f.Terms.Terms() {
			*dst = append(*dst, Facet{Value: t.Term, Count: t.Count})
		}
	}
}

func makeHit(h *search.DocumentMatch, score, rank float64) Hit {
	f := h.Fields
	hit := Hit{
		URL:        str(f[FieldURL]),
		Title:      str(f[FieldTitle]),
		Score:      score,
		Site:       str(f[FieldSite]),
		MIME:       str(f[FieldMIME]),
		Type:       str(f[FieldType]),
		Collection: str(f[FieldCollection]),
		Modified:   date(f[FieldModified]),
		Rank:       rank,
	}
	if frags := h.Fragments[FieldTitle]; len(frags) > 0 {
		hit.TitleHTML = frags[0]
	} else {
		hit.TitleHTML = html.EscapeString(hit.Title)
	}
	if frags := h.Fragments[FieldBody]; len(frags) > 0 {
		hit.Snippet = strings.Join(frags, " … ")
	} else {
		hit.Snippet = html.EscapeString(str(f[FieldSummary]))
	}
	return hit
}

// buildQuery turns a parsed query into a bleve query.
func buildQuery(q Query, collection string) query.Query {
	bq := query.NewBooleanQuery(nil, nil, nil)
	anyFields := func(mk func(field string) query.Query) query.Query {
		d := query.NewDisjunctionQuery(nil)
		for _, fb := range fieldBoosts {
			d.AddQuery(mk(fb.field))
		}
		return d
	}
	word := func(w string) func(string) query.Query {
		return func(field string) query.Query {
			m := query.NewMatchQuery(w)
			m.SetField(field)
			m.SetOperator(query.MatchQueryOperatorAnd)
			m.SetBoost(boostOf(field))
			return m
		}
	}
	phrase := func(p string) func(string) query.Query {
		return func(field string) query.Query {
			m := query.NewMatchPhraseQuery(p)
			m.SetField(field)
			m.SetBoost(boostOf(field))
			return m
		}
	}
	positive := 0
	for _, w := range q.Words {
		bq.AddMust(anyFields(word(w)))
		positive++
	}
	for _, p := range q.Phrases {
		bq.AddMust(anyFields(phrase(p)))
		positive++
	}
	for _, g := range q.Or {
		d := query.NewDisjunctionQuery(nil)
		for _, alt := range g {
			if strings.Contains(alt, " ") {
				d.AddQuery(anyFields(phrase(alt)))
			} else {
				d.AddQuery(anyFields(word(alt)))
			}
		}
		bq.AddMust(d)
		positive++
	}
	for _, w := range q.NotWords {
		bq.AddMustNot(anyFields(word(w)))
	}
	for _, p := range q.NotPhrases {
		bq.AddMustNot(anyFields(phrase(p)))
	}
	term := func(field, v string) query.Query {
		t := query.NewTermQuery(v)
		t.SetField(field)
		return t
	}
	var filters []query.Query
	if len(q.Sites) > 0 {
		d := query.NewDisjunctionQuery(nil)
		for _, s := range q.Sites {
			d.AddQuery(term(FieldDomains, s))
		}
		filters = append(filters, d)
	}
	for _, s := range q.NotSites {
		bq.AddMustNot(term(FieldDomains, s))
	}
	typeTerm := func(t string) query.Query {
		if strings.Contains(t, "/") {
			return term(FieldMIME, t)
		}
		return term(FieldType, t)
	}
	if len(q.Types) > 0 {
		d := query.NewDisjunctionQuery(nil)
		for _, t := range q.Types {
			d.AddQuery(typeTerm(t))
		}
		filters = append(filters, d)
	}
	for _, t := range q.NotTypes {
		bq.AddMustNot(typeTerm(t))
	}
	if collection != "" {
		filters = append(filters, term(FieldCollection, collection))
	}
	if positive == 0 {
		bq.AddMust(query.NewMatchAllQuery())
	}
	switch len(filters) {
	case 0:
	case 1:
		bq.AddFilter(filters[0])
	default:
		bq.AddFilter(query.NewConjunctionQuery(filters))
	}
	return bq
}

func boostOf(field string) float64 {
	for _, fb := range fieldBoosts {
		if fb.field == field {
			return fb.boost
		}
	}
	return 1
}

// PlainSnippet turns an HTML snippet (as in Hit.Snippet) into plain text,
// with each highlighted term between before and after.
func PlainSnippet(s, before, after string) string {
	s = strings.ReplaceAll(s, "<mark>", "\x00")
	s = strings.ReplaceAll(s, "</mark>", "\x01")
	s = html.UnescapeString(s)
	s = strings.ReplaceAll(s, "\x00", before)
	return strings.ReplaceAll(s, "\x01", after)
}
