package opensearch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/trawl/trawl/internal/index"
)

// facetSize is how many values of each facet a search returns, as the
// embedded index does.
const facetSize = 10

// Search implements index.Searcher over the OpenSearch index.
func (c *Client) Search(ctx context.Context, q string, o index.SearchOptions) (*index.Results, error) {
	start := time.Now()
	pq, o := index.PrepareQuery(q, o)
	res := &index.Results{Query: q, Parsed: pq.String(), From: o.From, Size: o.Size, Hits: []index.Hit{}}
	if pq.Empty() {
		res.Took = time.Since(start)
		return res, nil
	}
	body, err := json.Marshal(SearchBody(pq, o))
	if err != nil {
		return nil, fmt.Errorf("opensearch: search: %w", err)
	}
	r, err := c.api.Search(ctx, &opensearchapi.SearchReq{Indices: []string{c.cfg.Index}, Body: bytes.NewReader(body)})
	if err != nil {
		return nil, fmt.Errorf("opensearch: search %s: %w", c.cfg.Index, describe(err))
	}
	res.Total = uint64(r.Hits.Total.Value)
	for _, h := range r.Hits.Hits {
		hit, err := makeHit(h)
		if err != nil {
			return nil, err
		}
		res.Hits = append(res.Hits, hit)
	}
	if o.Facets && len(r.Aggregations) > 0 {
		var aggs map[string]struct {
			Buckets []struct {
				Key      string `json:"key"`
				DocCount int    `json:"doc_count"`
			} `json:"buckets"`
		}
		if err := json.Unmarshal(r.Aggregations, &aggs); err != nil {
			return nil, fmt.Errorf("opensearch: search %s: aggregations: %w", c.cfg.Index, err)
		}
		for name, dst := range map[string]*[]index.Facet{index.FieldSite: &res.Sites, index.FieldType: &res.Types} {
			for _, b := range aggs[name].Buckets {
				*dst = append(*dst, index.Facet{Value: b.Key, Count: b.DocCount})
			}
		}
	}
	res.Took = time.Since(start)
	return res, nil
}

// SearchBody is the search request for a parsed query (see the package
// comment).
func SearchBody(pq index.Query, o index.SearchOptions) map[string]any {
	boosts := index.FieldBoosts()
	fields := make([]string, 0, len(boosts))
	for _, f := range []string{index.FieldTitle, index.FieldAnchor, index.FieldBody} {
		fields = append(fields, fmt.Sprintf("%s^%g", f, boosts[f]))
	}
	word := func(w string) any {
		return map[string]any{"multi_match": map[string]any{"query": w, "fields": fields, "type": "most_fields", "operator": "and"}}
	}
	phrase := func(p string) any {
		var should []any
		for _, f := range []string{index.FieldTitle, index.FieldAnchor, index.FieldBody} {
			should = append(should, map[string]any{"match_phrase": map[string]any{f: map[string]any{"query": p, "boost": boosts[f]}}})
		}
		return map[string]any{"bool": map[string]any{"should": should, "minimum_should_match": 1}}
	}
	terms := func(field string, vs []string) any { return map[string]any{"terms": map[string]any{field: vs}} }
	typeTerm := func(t string) any {
		if strings.Contains(t, "/") {
			return map[string]any{"term": map[string]any{index.FieldMIME: t}}
		}
		return map[string]any{"term": map[string]any{index.FieldType: t}}
	}
	var must, mustNot, filter []any
	for _, w := range pq.Words {
		must = append(must, word(w))
	}
	for _, p := range pq.Phrases {
		must = append(must, phrase(p))
	}
	for _, w := range pq.NotWords {
		mustNot = append(mustNot, word(w))
	}
	for _, p := range pq.NotPhrases {
		mustNot = append(mustNot, phrase(p))
	}
	if len(pq.Sites) > 0 {
		filter = append(filter, terms(index.FieldDomains, pq.Sites))
	}
	if len(pq.NotSites) > 0 {
		mustNot = append(mustNot, terms(index.FieldDomains, pq.NotSites))
	}
	if len(pq.Types) > 0 {
		var any1 []any
		for _, t := range pq.Types {
			any1 = append(any1, typeTerm(t))
		}
		filter = append(filter, map[string]any{"bool": map[string]any{"should": any1, "minimum_should_match": 1}})
	}
	for _, t := range pq.NotTypes {
		mustNot = append(mustNot, typeTerm(t))
	}
	if o.Collection != "" {
		filter = append(filter, map[string]any{"term": map[string]any{index.FieldCollection: o.Collection}})
	}
	if len(must) == 0 {
		must = append(must, map[string]any{"match_all": map[string]any{}})
	}
	boolQ := map[string]any{"must": must}
	if len(mustNot) > 0 {
		boolQ["must_not"] = mustNot
	}
	if len(filter) > 0 {
		boolQ["filter"] = filter
	}
	body := map[string]any{
		"from": o.From, "size": o.Size, "track_total_hits": true,
		"query": map[string]any{"function_score": map[string]any{
			"query": map[string]any{"bool": boolQ},
			"functions": []any{
				map[string]any{"weight": 1},
				map[string]any{"field_value_factor": map[string]any{"field": index.FieldRank, "missing": 0}},
			},
			"score_mode": "sum", "boost_mode": "multiply",
		}},
		"_source": []string{index.FieldURL, index.FieldTitle, index.FieldSummary, index.FieldSite, index.FieldMIME,
			index.FieldType, index.FieldCollection, index.FieldModified, index.FieldRank},
		"highlight": map[string]any{
			"pre_tags": []string{"<mark>"}, "post_tags": []string{"</mark>"}, "encoder": "html",
			"fields": map[string]any{
				index.FieldTitle: map[string]any{"number_of_fragments": 0},
				index.FieldBody:  map[string]any{"fragment_size": 150, "number_of_fragments": 3},
			},
		},
	}
	if o.Facets {
		body["aggs"] = map[string]any{
			index.FieldSite: map[string]any{"terms": map[string]any{"field": index.FieldSite, "size": facetSize}},
			index.FieldType: map[string]any{"terms": map[string]any{"field": index.FieldType, "size": facetSize}},
		}
	}
	return body
}

// hitSource is the part of a document a hit shows.
type hitSource struct {
	URL        string    `json:"url"`
	Title      string    `json:"title"`
	Summary    string    `json:"summary"`
	Site       string    `json:"site"`
	MIME       string    `json:"mime"`
	Type       string    `json:"type"`
	Collection string    `json:"collection"`
	Modified   time.Time `json:"modified"`
	Rank       float64   `json:"rank"`
}

func makeHit(h opensearchapi.SearchHit) (index.Hit, error) {
	var s hitSource
	if err := json.Unmarshal(h.Source, &s); err != nil {
		return index.Hit{}, fmt.Errorf("opensearch: hit %s: %w", h.ID, err)
	}
	hit := index.Hit{URL: s.URL, Title: s.Title, Score: float64(h.Score), Site: s.Site, MIME: s.MIME, Type: s.Type,
		Collection: s.Collection, Modified: s.Modified, Rank: s.Rank}
	if frags := h.Highlight[index.FieldTitle]; len(frags) > 0 {
		hit.TitleHTML = frags[0]
	} else {
		hit.TitleHTML = html.EscapeString(hit.Title)
	}
	if frags := h.Highlight[index.FieldBody]; len(frags) > 0 {
		hit.Snippet = strings.Join(frags, " … ")
	} else {
		hit.Snippet = html.EscapeString(s.Summary)
	}
	return hit, nil
}
