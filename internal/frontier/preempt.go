package frontier

import "time"

// Preempt stops crawling site at once (CMD_ADM_PREEMPT_SITE, MS-FSCMT
// §3.1.5.13): when the site is being crawled (it holds one of the max_sites
// slots, or has fetches in flight) no new fetch of it starts, it gives its
// slot back as soon as nothing of it is in flight, and it is queued again
// among the sites waiting for a slot when until has passed, at the front
// with front (the message's requeue flag). Its queued entries stay on disk.
// It reports false, and changes nothing, when the site is not being
// crawled (the spec: the message is then ignored).
func (f *Frontier) Preempt(site string, until time.Time, front bool, now time.Time) (bool, error) {
	if f.err != nil {
		return false, f.err
	}
	st := f.sites[site]
	if st == nil || (!st.holds && len(st.fly) == 0) {
		return false, nil
	}
	if st.blockedUntil.After(until) {
		until = st.blockedUntil // a longer quarantine stands
	}
	if st.inReady {
		st.readyVer++
		st.inReady = false
	}
	f.block(st, until, front, now)
	return true, f.err
}
