package stats

// Kind is how an attribute aggregates (MS-FSCADM 2.2.4.6).
type Kind uint8

// The aggregation kinds, in the order the schema dictionary lists them.
const (
	Continuous Kind = iota + 1
	Discrete
	MultiDiscrete
	Histogram
	MultiDimension
)

var kindNames = [...]string{"", "continuous", "discrete", "multidiscrete", "histogram", "multidimension"}

// String returns the kind's key in a schema dictionary ("continuous", ...).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind?"
}

// Kinds lists every kind in the order records are written.
var kinds = [...]Kind{Discrete, Continuous, Histogram, MultiDimension, MultiDiscrete}

// Type is the type of an attribute's values.
type Type uint8

// Value types. Count and Bytes values are integers (written as int or long),
// Seconds and Timestamp values are floats, Text values strings. The spec's
// "int, long or double" becomes the first that fits what the attribute
// measures.
const (
	Count Type = iota + 1
	Bytes
	Seconds
	Timestamp
	Text
)

// Attr is one attribute of a schema.
type Attr struct {
	Name string
	Kind Kind
	Type Type
	// Unit is the unit of a numeric value ("", "bytes", "s", "1/s",
	// "unix time").
	Unit string
	// Doc is the meaning, after the spec's table.
	Doc string
	// Section is the spec section that defines it.
	Section string
}

// Schema is one statistics schema: its name (the __schemaname__ value) and
// its attributes.
type Schema struct {
	Name  string
	Attrs []Attr
	index map[string]int
}

// Schema names (MS-FSCADM 2.2.4.7).
const (
	GlobalSchemaName     = "globalschema"
	SiteSchemaName       = "siteschema"
	CollectionSchemaName = "collectionschema"
)

// Index returns the position of attribute name, or -1.
func (s *Schema) Index(name string) int {
	if i, ok := s.index[name]; ok {
		return i
	}
	return -1
}

// Attr returns the attribute called name.
func (s *Schema) Attr(name string) (Attr, bool) {
	i := s.Index(name)
	if i < 0 {
		return Attr{}, false
	}
	return s.Attrs[i], true
}

func newSchema(name string, attrs ...[]Attr) *Schema {
	s := &Schema{Name: name, index: map[string]int{}}
	for _, l := range attrs {
		for _, a := range l {
			s.index[a.Name] = len(s.Attrs)
			s.Attrs = append(s.Attrs, a)
		}
	}
	return s
}

func unitOf(t Type) string {
	switch t {
	case Bytes:
		return "bytes"
	case Seconds:
		return "s"
	case Timestamp:
		return "unix time"
	}
	return ""
}

func attr(name string, k Kind, t Type, sec, doc string) Attr {
	return Attr{Name: name, Kind: k, Type: t, Unit: unitOf(t), Doc: doc, Section: sec}
}

// The schemas never change after package initialization; the functions
// below hand out the same read-only values.
var (
	globalAttrs = []Attr{
		attr("Uptime", Discrete, Timestamp, "2.2.4.8", "when the server began recording statistics"),
		attr("DNSWrite", Continuous, Bytes, "2.2.4.8", "bytes of DNS traffic sent to a DNS server"),
		attr("DNSRead", Continuous, Bytes, "2.2.4.8", "bytes of DNS traffic received from a DNS server"),
		attr("DNSRequests", Continuous, Count, "2.2.4.8", "DNS requests sent"),
		attr("DNSResponses", Continuous, Count, "2.2.4.8", "DNS responses received"),
		attr("DNSRetries", Continuous, Count, "2.2.4.8", "DNS requests sent as retries"),
		attr("DNSTimeout", Continuous, Count, "2.2.4.8", "DNS requests that timed out"),
		attr("DNSResponse", Histogram, Count, "2.2.4.8", "DNS responses by RCODE (RFC 1035)"),
		attr("DNSRateLimit", Discrete, Count, "2.2.4.8", "maximum DNS requests per second"),
	}
	siteAttrs = []Attr{
		attr("Processed", Continuous, Count, "2.2.4.9", "URIs taken from the crawl queue and requested"),
		attr("Downloaded", Continuous, Count, "2.2.4.9", "HTTP responses received"),
		attr("Stored", Continuous, Count, "2.2.4.9", "documents written to document storage, modified and new"),
		attr("Modified", Continuous, Count, "2.2.4.9", "modified documents"),
		attr("Deleted", Continuous, Count, "2.2.4.9", "documents deleted from document storage"),
		attr("Unchanged", Continuous, Count, "2.2.4.9", "documents whose checksum equals the previous cycle's"),
		attr("DBUpdates", Continuous, Count, "2.2.4.9", "URI metadata writes"),
		attr("ReadNet", Continuous, Bytes, "2.2.4.9", "bytes received on HTTP, HTTPS and FTP connections"),
		attr("WriteNet", Continuous, Bytes, "2.2.4.9", "bytes sent on HTTP, HTTPS and FTP connections"),
		attr("HasLastMod", Continuous, Count, "2.2.4.9", "documents with a Last-Modified header"),
		attr("HasETag", Continuous, Count, "2.2.4.9", "documents with an ETag header"),
		attr("DLTime", Continuous, Seconds, "2.2.4.9", "download time, one update per document"),
		attr("DocSize", Continuous, Bytes, "2.2.4.9", "document size, one update per document"),
		attr("Retries", Continuous, Count, "2.2.4.9", "URIs that failed and are or will be retried"),
		attr("HasSitemap", Continuous, Count, "2.2.4.9", "robots.txt files with a Sitemap directive"),
		attr("NodeSchedulerFwd", Continuous, Count, "2.2.4.9", "URIs forwarded between crawler nodes"),
		attr("LocalFwd", Continuous, Count, "2.2.4.9", "links to other sites not forwarded to another node"),
		attr("Local", Continuous, Count, "2.2.4.9", "links within a site"),
		attr("LastUri", Discrete, Text, "2.2.4.9", "most recent URI crawled"),
		attr("QueueLength", Discrete, Count, "2.2.4.9", "URIs on the crawl queue"),
		attr("CrawlStarted", Discrete, Timestamp, "2.2.4.9", "when the site (collection) began crawling"),
		attr("CrawlEnded", Discrete, Timestamp, "2.2.4.9", "when the site (collection) stopped crawling"),
		attr("Epoch", Discrete, Count, "2.2.4.9", "crawl refresh cycle number"),
		attr("LastRefresh", Discrete, Timestamp, "2.2.4.9", "when the current refresh cycle began"),
		attr("HTTPResponse", Histogram, Count, "2.2.4.9", "HTTP status codes"),
		attr("URISkip", Histogram, Count, "2.2.4.9", "URI skip codes (2.2.3.1)"),
		attr("DocSkip", Histogram, Count, "2.2.4.9", "document skip codes (2.2.3.2)"),
		attr("MimeType", Histogram, Count, "2.2.4.9", "content types"),
	}
	collectionAttrs = []Attr{
		attr("Uptime", Discrete, Timestamp, "2.2.4.10", "when the collection was added"),
		attr("ActiveSites", Discrete, Count, "2.2.4.10", "sites being crawled"),
		attr("Feeding", Discrete, Count, "2.2.4.10", "0 if content submission is paused, else 1"),
		attr("Status", Discrete, Count, "2.2.4.10", "collection status code (2.2.3.3)"),
		attr("CrawlMode", Discrete, Text, "2.2.4.10", "crawl limit reached (2.2.3.6), or empty"),
		attr("StartUriStatus", MultiDimension, Text, "2.2.4.10", "start URI file -> \"<filesize> <fileposition>\""),
		attr("FeedingDestinations", MultiDimension, Text, "2.2.4.10", "content destination -> \"0\" paused or \"1\""),
		attr("SumActiveSites", MultiDiscrete, Count, "2.2.4.10", "ActiveSites summed over node schedulers"),
		attr("PPFailed", Continuous, Count, "2.2.4.10", "URIs that failed submission to indexing"),
		attr("PPSucceeded", Continuous, Count, "2.2.4.10", "URIs successfully indexed"),
		attr("PPFed", Continuous, Count, "2.2.4.10", "URIs successfully submitted to indexing"),
		attr("PPDeleted", Continuous, Count, "2.2.4.10", "URIs deleted from the index"),
		attr("PPAdded", Continuous, Count, "2.2.4.10", "new URIs with unique checksums"),
		attr("PPModified", Continuous, Count, "2.2.4.10", "seen URIs with unique checksums"),
		attr("PPURLsChange", Continuous, Count, "2.2.4.10", "urlchange operations sent to indexing"),
		attr("PPPartialUpdate", Continuous, Count, "2.2.4.10", "reserved, always 0"),
		attr("PPChecksums", Discrete, Count, "2.2.4.10", "unique document checksums in the crawler store"),
		attr("SumPPChecksums", MultiDiscrete, Count, "2.2.4.10", "PPChecksums summed over node schedulers"),
	}

	globalSchema     = newSchema(GlobalSchemaName, globalAttrs)
	siteSchema       = newSchema(SiteSchemaName, siteAttrs)
	collectionSchema = newSchema(CollectionSchemaName, siteAttrs, collectionAttrs)
)

// GlobalSchema is the global statistics schema (2.2.4.8). Do not modify.
func GlobalSchema() *Schema { return globalSchema }

// SiteSchema is the crawl site statistics schema (2.2.4.9). Do not modify.
func SiteSchema() *Schema { return siteSchema }

// CollectionSchema is the crawl collection statistics schema (2.2.4.10):
// every site attribute plus the collection's own. Do not modify.
func CollectionSchema() *Schema { return collectionSchema }

// SchemaByName returns the schema whose __schemaname__ is name.
func SchemaByName(name string) *Schema {
	switch name {
	case GlobalSchemaName:
		return globalSchema
	case SiteSchemaName:
		return siteSchema
	case CollectionSchemaName:
		return collectionSchema
	}
	return nil
}
