package crawladmin

import (
	"context"
	"net/http"
	"net/http/httptest"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/diskspace"
)

// HTTP is the administration side of a process's HTTP interface: the
// MS-FSCADM API at /RPC2, the status page at /status (and / when nothing
// else serves it), its data at /status.json and the Prometheus metrics at
// /metrics, all behind auth.
type HTTP struct {
	Backend *Backend
	// Metrics are the process's metrics, on a registry of their own.
	Metrics *admin.Metrics
	reg     *prometheus.Registry
	auth    admin.Auth
	chain   func(context.Context) *admin.ChainStatus
	disk    func() diskspace.Status
}

// SetDisk adds the full-disk guard's state, read from f, to the status
// page ("disk full: paused") and to /metrics (trawl_disk_*). Call it
// before serving.
func (h *HTTP) SetDisk(f func() diskspace.Status) {
	h.disk = f
	h.Metrics.SetDisk(f)
}

// SetChain adds a feeding chain to the status page (report, asked at each
// request) and its metrics to /metrics. Call it before serving.
func (h *HTTP) SetChain(report func(context.Context) *admin.ChainStatus, metrics prometheus.Collector) error {
	h.chain = report
	return h.reg.Register(metrics)
}

// status is the status page's report, with the feeding chain if any.
func (h *HTTP) status(ctx context.Context) (*admin.StatusReport, error) {
	rep, err := h.Backend.Status(ctx)
	if err == nil && h.chain != nil {
		rep.Chain = h.chain(ctx)
	}
	if err == nil && h.disk != nil {
		st := h.disk()
		rep.Disk = &st
	}
	return rep, err
}

// NewHTTP serves b behind auth.
func NewHTTP(b *Backend, auth admin.Auth) *HTTP {
	h := &HTTP{Backend: b, reg: prometheus.NewRegistry(), auth: auth}
	// A new registry holds nothing yet, so registering cannot collide.
	h.Metrics, _ = admin.NewMetrics(h.reg, b.Counters)
	return h
}

// Mount adds the handlers to mux.
func (h *HTTP) Mount(mux *http.ServeMux) {
	rpc := admin.NewServer(h.Backend, admin.ServerOptions{Logger: h.Backend.Logger()})
	status := admin.StatusHandler(h.status)
	mux.Handle(admin.Path, h.auth.Wrap(rpc))
	mux.Handle("/status", h.auth.Wrap(status))
	mux.Handle("/status.json", h.auth.Wrap(status))
	mux.Handle("/metrics", h.auth.Wrap(admin.MetricsHandler(h.reg)))
	if _, pat := mux.Handler(httptest.NewRequest(http.MethodGet, "/", nil)); pat == "" {
		mux.Handle("/{$}", h.auth.Wrap(status))
	}
}
