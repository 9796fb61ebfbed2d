package multinode

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// rerouteDirName is the directory under Server.Data where an operator drops
// reroute requests (RequestReroute): one empty file per node scheduler,
// named by its path-escaped identifier.
const rerouteDirName = "reroute"

// RequestReroute asks the multinode scheduler running on data to reroute
// the sites of node (`trawl multinode --reroute ID`): it writes the request
// file the server polls for (Server.RerouteRequests) and returns its path.
func RequestReroute(data, node string) (string, error) {
	if node == "" {
		return "", fmt.Errorf("multinode: empty node identifier")
	}
	name := url.PathEscape(node)
	if name == "." || name == ".." {
		return "", fmt.Errorf("multinode: node identifier %q cannot name a file", node)
	}
	dir := filepath.Join(data, rerouteDirName)
	if err := os.MkdirAll(dir, logDirMode); err != nil {
		return "", fmt.Errorf("multinode: %w", err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, nil, logFileMode); err != nil {
		return "", fmt.Errorf("multinode: %w", err)
	}
	return path, nil
}

// pollReroutes carries out the reroute requests under s.Data every period
// until ctx ends. A request that fails stays (logged) and is tried again,
// except for an unknown or connected node, which is dropped.
func (s *Server) pollReroutes(ctx context.Context, period time.Duration) {
	dir := filepath.Join(s.Data, rerouteDirName)
	t := time.NewTicker(period)
	defer t.Stop()
	failed := map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			if e.Type().IsRegular() {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, name := range names {
			node, err := url.PathUnescape(name)
			path := filepath.Join(dir, name)
			if err != nil {
				os.Remove(path)
				continue
			}
			n, err := s.RerouteNode(ctx, node)
			if err == ErrNoNodes {
				if !failed[node] {
					s.logger().Warn("multinode: reroute waits for a registered node scheduler", "node", node)
					failed[node] = true
				}
				continue
			}
			delete(failed, node)
			os.Remove(path)
			if err != nil {
				s.logger().Error("multinode: reroute refused", "node", node, "err", err)
				continue
			}
			s.logger().Info("multinode: reroute done", "node", node, "attrs", n)
		}
	}
}
