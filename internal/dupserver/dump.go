package dupserver

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

// Dump writes every mapping of the Pebble checksum store in dir, one line
// each in key order: collection, checksum (hex), owner URI and node
// identifier, tab-separated (`trawl dupserver --dump`). The store must not
// be open in a running server.
func Dump(w io.Writer, dir string) error {
	if _, err := os.Stat(dir); err != nil {
		return errorf("dump: %w", err)
	}
	st, err := OpenPebble(dir, PebbleOptions{})
	if err != nil {
		return err
	}
	defer st.Close()
	bw := bufio.NewWriter(w)
	err = st.Mappings("", func(k Key, o Owner) error {
		_, err := fmt.Fprintf(bw, "%s\t%s\t%s\t%s\n", k.Collection, k.Checksum.String(), o.URI, o.NodeID)
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}
