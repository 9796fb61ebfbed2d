package fetch

import "time"

// Backoff is the per-site policy of MS-FSCCFG max_backoff_counter and
// max_backoff_delay. Each connection failure (Kind.ConnectionFailure)
// doubles the site's delay, starting from its configured delay, up to
// MaxDelay; a successful fetch restores the configured delay and resets the
// count. When the count of consecutive failures exceeds MaxFailures, the
// crawl of the site stops.
type Backoff struct {
	// MaxFailures is max_backoff_counter (default 50).
	MaxFailures int
	// MaxDelay is max_backoff_delay (default 600 s).
	MaxDelay time.Duration
}

// DefaultBackoff is the MS-FSCCFG default.
var DefaultBackoff = Backoff{MaxFailures: 50, MaxDelay: 600 * time.Second}

// BackoffState is one site's backoff; the zero value is a healthy site.
type BackoffState struct {
	Failures int           // consecutive connection failures
	Delay    time.Duration // current extra-long delay; 0 when healthy
}

// Failure records a connection failure of a site whose configured delay is
// base. It returns the new state, the delay to wait before the next fetch,
// and whether the site must be given up.
func (b Backoff) Failure(s BackoffState, base time.Duration) (BackoffState, time.Duration, bool) {
	s.Failures++
	d := s.Delay
	if d < base {
		d = base
	}
	if d < time.Second {
		d = time.Second
	}
	d *= 2
	if b.MaxDelay > 0 && d > b.MaxDelay {
		d = max(b.MaxDelay, base)
	}
	s.Delay = d
	return s, d, b.MaxFailures > 0 && s.Failures > b.MaxFailures
}

// Success records a fetch that reached the site: the state is reset and
// the configured delay applies again.
func (b Backoff) Success(BackoffState) BackoffState { return BackoffState{} }

// Next is the delay to wait before the next fetch from the site.
func (s BackoffState) Next(base time.Duration) time.Duration {
	return max(s.Delay, base)
}
