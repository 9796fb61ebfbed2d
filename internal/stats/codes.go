package stats

// URI skip codes (MS-FSCADM 2.2.3.1): why a URI extracted from a document
// was not added to the crawl queue.
const (
	SkipNoFollow = "nf" // nofollow META tag, or RSS configuration
	SkipScheme   = "ch" // scheme not configured
	SkipURIRule  = "ur" // URI exclusion rules
	SkipRobots   = "ro" // robots.txt Disallow
	SkipHostname = "do" // hostname not included
	SkipCache    = "ic" // already queued (internal cache)
	SkipOutFocus = "fo" // outside the focused crawl
	SkipDepth    = "de" // crawl depth exceeded
)

// URISkipCodes lists the URI skip codes in the spec's order.
func URISkipCodes() []string {
	return []string{SkipNoFollow, SkipScheme, SkipURIRule, SkipRobots, SkipHostname, SkipCache, SkipOutFocus, SkipDepth}
}

// Document skip codes (MS-FSCADM 2.2.3.2): why a downloaded document was
// discarded.
const (
	DocHeaderError    = "he"
	DocMIMEType       = "mi"
	DocTimeout        = "ti"
	DocTooLarge       = "tl"
	DocHeaderExcluded = "hx"
	DocEncoding       = "en"
	DocChunkError     = "cu"
	DocNoRedirect     = "nr"
	DocNoIndex        = "ni"
	DocDuplicate      = "cs"
	DocOutFocus       = "fs"
	DocIncomplete     = "in"
	DocConnectFailure = "co"
	DocConnectTimeout = "ct"
	DocNetworkError   = "ne"
	DocEmpty          = "em"
	DocEmptyHeader    = "eh"
	DocRSSNoIndex     = "rs"
	DocOther          = "ot"
)

// DocSkipCodes lists the document skip codes in the spec's order.
func DocSkipCodes() []string {
	return []string{DocHeaderError, DocMIMEType, DocTimeout, DocTooLarge, DocHeaderExcluded, DocEncoding,
		DocChunkError, DocNoRedirect, DocNoIndex, DocDuplicate, DocOutFocus, DocIncomplete,
		DocConnectFailure, DocConnectTimeout, DocNetworkError, DocEmpty, DocEmptyHeader, DocRSSNoIndex, DocOther}
}

// Status is a crawl collection status code (MS-FSCADM 2.2.3.3). Codes 2
// and 7 are reserved.
type Status int

// The status codes.
const (
	StatusCrawling      Status = 1 // crawling or idle
	StatusDeleting      Status = 3 // being deleted ("zombie")
	StatusSuspended     Status = 4
	StatusDiskFull      Status = 5 // suspended: no free disk space
	StatusCompacting    Status = 6 // regular cleanup
	StatusVariableDelay Status = 8 // suspended by variable_delay
)

// Valid reports whether s is a status code the spec defines.
func (s Status) Valid() bool {
	switch s {
	case StatusCrawling, StatusDeleting, StatusSuspended, StatusDiskFull, StatusCompacting, StatusVariableDelay:
		return true
	}
	return false
}

// Code returns the lower-case status string of 2.2.3.4 ("crawling",
// "zombie", "suspended", "compacting"), which CollectionGetStatus returns.
// The two suspended variants are "suspended".
func (s Status) Code() string {
	switch s {
	case StatusCrawling:
		return "crawling"
	case StatusDeleting:
		return "zombie"
	case StatusSuspended, StatusDiskFull, StatusVariableDelay:
		return "suspended"
	case StatusCompacting:
		return "compacting"
	}
	return "unknown"
}

// String returns the flattened Status string of 2.2.5 ("Crawling",
// "Zombie", "Suspended", "Disk full", "Compacting", "Variable delay
// suspended").
func (s Status) String() string {
	switch s {
	case StatusCrawling:
		return "Crawling"
	case StatusDeleting:
		return "Zombie"
	case StatusSuspended:
		return "Suspended"
	case StatusDiskFull:
		return "Disk full"
	case StatusCompacting:
		return "Compacting"
	case StatusVariableDelay:
		return "Variable delay suspended"
	}
	return "Unknown"
}

// Crawl mode strings (MS-FSCADM 2.2.3.6); the empty string when no crawl
// limit is reached.
const (
	CrawlModeNormal      = ""
	CrawlModeMaxDoc      = "Refreshing(limit=max_doc)"
	CrawlModeDiskFree    = "Refreshing(limit=disk_free)"
	CrawlModeUserRefresh = "Refreshing(limit=user)"
)

// Refresh mode values of the dspec dictionary (MS-FSCADM 2.2.4.2).
const (
	RefreshAppend   = 1
	RefreshPrepend  = 2
	RefreshScratch  = 4
	RefreshSoft     = 8
	RefreshAdaptive = 32
)

// RefreshModeCode returns the dspec value of an MS-FSCCFG refresh_mode name,
// and false for an unknown name.
func RefreshModeCode(name string) (int, bool) {
	switch name {
	case "append":
		return RefreshAppend, true
	case "prepend":
		return RefreshPrepend, true
	case "scratch":
		return RefreshScratch, true
	case "soft":
		return RefreshSoft, true
	case "adaptive":
		return RefreshAdaptive, true
	}
	return 0, false
}

// RefreshModeName is the inverse of RefreshModeCode ("" when unknown).
func RefreshModeName(code int) string {
	switch code {
	case RefreshAppend:
		return "append"
	case RefreshPrepend:
		return "prepend"
	case RefreshScratch:
		return "scratch"
	case RefreshSoft:
		return "soft"
	case RefreshAdaptive:
		return "adaptive"
	}
	return ""
}
