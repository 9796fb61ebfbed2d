// Package table is the table engine of MS-FSFDMW (3.1.1, 3.3.5.1.2.1): sort,
// split, merge and reduce over tables stored as ASCII files, one record per
// line, fields separated by one SP, each line ending in LF.
//
// # Specifications
//
//	tableinputspec  = filename ":" numcolumns ":" key          key 1-based, <= numcolumns
//	tableoutputspec = filename_prefix ":" key ":" split_factor
//	sortkeyspec     = "-k" start [ "," end [ "n" ] ] [ "r" ]    e.g. -k1 -k1,1 -k2,2nr
//
// A spec is split at its last two colons, so a file name may hold a colon.
// Decisions where the spec is silent:
//
//   - The output key is a 1-based column like the input key; 0 hashes the
//     whole record. A split_factor of 0 writes one file, as 1 does. The
//     files are prefix.0 .. prefix.(n-1).
//   - Split hashes the bytes of the key field (no separator) with CRC32
//     (IEEE), read as a signed 32-bit integer, modulo n with the divisor's
//     sign: Python 2's zlib.crc32(v) % n. long_split reads the field as a
//     decimal integer of any size (a non-integer goes to file 0). With
//     several -o specs, each gets a full split of the input.
//   - Sort compares the selected columns (from the start of column S to the
//     end of column E, separators included, as GNU sort -t ' ' -kS,E), key by
//     key; "n" compares as GNU sort -n in the C locale; "r" reverses that
//     key. Records equal on every key are ordered by their whole bytes (GNU
//     sort's last resort), so the output is the same whatever the order of
//     the input; with -u the first of each set of equal keys is kept (the
//     sort is stable). Output is byte-identical to LC_ALL=C sort -t ' ' with
//     the same keys (TestSortMatchesGNUSort). -S bounds the memory of
//     records (their bytes plus 40 per record, offsets into one buffer); beyond it sorted runs spill to
//     temporary files in the output's directory and are merged with a heap.
//     -T must be "." and is ignored, as the spec says.
//   - Merge inputs and reduce input are sorted on their key column (bytewise,
//     as the sort's -kK,K leaves them). Merge visits keys in ascending order
//     and hands the function the group of records of each input for the key
//     (empty when an input lacks it); outside reduce mode it is called once
//     per combination of one record of each non-empty group, which is once
//     per duplicate when (as the spec requires) at most one table has
//     duplicates. Reduce hands each run of equal keys to the function.
//   - Every output is written under a temporary name in its directory and
//     renamed into place when complete: a killed task leaves no partial file
//     under an output's name.
//
// # Programs
//
// Main runs the programs a dmake worker's shell task launches as
// "trawl table PROGRAM ARGS", each standing for one of the spec's:
//
//	jsort2.exe -S <n>M -T . [-m] [-u] [-k..]... in... -o out   -> trawl table sort ...
//	cobra ...\split.pyc in (-o outspec)... [--splitfunction2 f] -> trawl table split ...
//	cobra ...\merge.pyc (-i inspec){2,3} -o outspec -l f [-r]   -> trawl table merge ...
//	cobra ...\reduce.pyc -i inspec -o outspec [-l f] [--funcvars=v] -> trawl table reduce ...
//	cobra ...\pythontasks.pyc f args...                         -> trawl table pythontasks f args...
//
// The spec's garbled flags are accepted too ("-1" for "-l", "o" for "-o",
// "-" for "-i", --splitfunction for --splitfunction2). funcvars is URL-safe
// base64 of a zlib stream of an MS-FSWCU dictionary.
//
// # Functions
//
// A Registry maps spec names to functions; it is built by NewRegistry (no
// global state). The 23 merge and 25 reduce functions of the web analyzer
// are registered by that package. NewRegistry holds the generic ones:
//
//	table.join   merge: inner join; main record + the other records' fields but their first
//	table.count  reduce: "key n"
//	table.first  reduce: the first record of each key (the default reduce function,
//	             which 3.6.5.3 requires and does not name)
//	table.sum    reduce: "key s", s the sum of the last column
//
// and the pythontasks.pyc functions that need no table layout:
// _local_copy_func, _local_touch_func, wamakefileutils.remove_files_in_filter,
// remove_files_not_in_filter, dir_creator, remove_directories,
// clean_view_build_dir, remove_coll_directory, remove_coll_files and
// {sp,wa}makefileutils.file_finder (targets concatenated by ascending
// timestamp). Permissions are "None" or the decimal value of a mode. The
// spec gives dir_creator, remove_directories, remove_coll_directory and
// remove_coll_files parameters but no handling: they do what their names
// say (mkdir -p; rm -r; rm -r DIR/COLLECTION; remove the
// [prefix.]COLLECTION.TIMESTAMP.NAME files of the collection in DIR).
// compare_links_and_nolinks needs the links and no_links layouts, so the
// web analyzer registers it (internal/webanalyzer).
package table
