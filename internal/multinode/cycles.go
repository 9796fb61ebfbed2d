package multinode

// refreshCyclesKey is the CMD_UM_STAT counter of refresh cycles started.
// It is not summed over the node schedulers: one refetch (or the common
// refresh period) starts a cycle on every node scheduler, and the
// statistics engine starts a new cycle of the collection each time the
// count grows. The collection's count is the largest node scheduler's
// (sumDict takes it like a maximum).
const refreshCyclesKey = "refresh_cycles"
