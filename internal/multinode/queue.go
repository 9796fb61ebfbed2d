package multinode

import "github.com/trawl/trawl/internal/cmt"

// queued is a crawl queue entry waiting in the multinode scheduler.
type queued struct {
	entry  cmt.Entry
	site   string // the entry's crawl site (normHost)
	urgent bool   // came as CMD_UM_URI_URG: forwarded as URI_URG
}

// deque is a double-ended queue: front holds the prepended entries in
// reverse order, back the appended ones from head on.
type deque struct {
	front []queued
	back  []queued
	head  int
}

func (d *deque) len() int { return len(d.front) + len(d.back) - d.head }

func (d *deque) pushBack(q queued) { d.back = append(d.back, q) }

func (d *deque) pushFront(q queued) { d.front = append(d.front, q) }

func (d *deque) peek() *queued {
	if n := len(d.front); n > 0 {
		return &d.front[n-1]
	}
	if d.head < len(d.back) {
		return &d.back[d.head]
	}
	return nil
}

func (d *deque) pop() {
	if n := len(d.front); n > 0 {
		d.front[n-1] = queued{}
		d.front = d.front[:n-1]
		return
	}
	if d.head < len(d.back) {
		d.back[d.head] = queued{}
		d.head++
		if d.head == len(d.back) {
			d.back, d.head = d.back[:0], 0
		} else if d.head > 1024 && d.head*2 > len(d.back) {
			n := copy(d.back, d.back[d.head:])
			clear(d.back[n:])
			d.back, d.head = d.back[:n], 0
		}
	}
}

func (d *deque) clear() { *d = deque{} }
