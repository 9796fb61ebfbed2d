// Package stats is the crawl statistics model of MS-FSCADM (sections
// 2.2.3-2.2.6): the three schemas (global, crawl collection, crawl site) as
// data, records of values of each aggregation type, deltas and their merge,
// crawl refresh cycles with the all-time cycle, the flattened structures the
// API returns, and the skip and status codes.
//
// # Model
//
// A Schema lists attributes, each with an aggregation Kind and a value
// Type. A Record holds one value per attribute of its schema:
//
//	kind           value [0]              [1]     [2]     [3]
//	continuous     sum of the updates     min     max     number of updates
//	discrete       last value set         min     max     number of updates
//	multidiscrete  as discrete (a sum of other discrete values)
//	histogram      {key: count}           "None"  "None"  number of updates
//	multidimension {key: [values]}        "None"  "None"  number of updates
//
// so that for a continuous attribute such as DocSize, adding each document's
// size once gives the total, the largest document (max) and the document
// count (updates): the flattened DocSizeAvg and DocSizeMax come from them.
//
// The engine feeds a delta Record (Add, Set, SetString, Observe, SetDim;
// none of them allocates once a key exists). Every minute or two the delta is
// folded into the current cycle and the all-time cycle and reset (Series).
// A node scheduler sends its deltas; the aggregator merges them in
// (Record.Merge, time order: a discrete value is replaced) or adds up the
// latest records of several nodes (Record.Sum: discrete values are summed).
//
// # Wire form
//
// CollectionGetStatistics and CollectionGetSiteStatistics return the
// statistics dictionary of section 2.2.4 marshalled in MS-FSWCU
// (internal/marshal):
//
//	{"dspec":  {collection: {"refresh": minutes, "refresh_mode": 1|2|4|8|32}},
//	 "global": (delta, cycles),                 absent for site statistics
//	 name:     (delta, cycles), ...}            collection or site
//	cycles   = {0: record, 1: record, ..., "cOmPIEtE": all-time record}
//	record   = {"__schemaname__": "collectionschema", "name": name,
//	            "__startts__": t0, "__stoptts__": t1,
//	            "continuous": [[attr, [v, min, max, n]], ...],
//	            "discrete": [...], "multidiscrete": [...],
//	            "histogram": [[attr, [{key: n}, "None", "None", n]], ...],
//	            "multidimension": [[attr, [{key: [v...]}, "None", "None", n]], ...]}
//
// CollectionGetStatistics2 and GetGlobalStatistics return the flattened
// structures of sections 2.2.5 and 2.2.6 (CollectionFlat, GlobalFlat),
// computed from a record by FlattenCollection and FlattenGlobal.
package stats
