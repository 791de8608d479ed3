package sim

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server is a Sim serving HTTP/1.1 on a real TCP socket, so that clients
// meet real connection resets, dropped connections and timeouts.
type Server struct {
	sim  *Sim
	http *http.Server
	url  string
	done chan struct{} // closed when Serve returns
}

// Start validates cfg, listens on cfg.Addr (127.0.0.1:0 when empty) and
// serves the simulator until Close.
func Start(cfg Config) (*Server, error) {
	sim, err := New(cfg)
	if err != nil {
		return nil, err
	}
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		_ = sim.Close()
		return nil, fmt.Errorf("sim: listen: %w", err)
	}
	s := &Server{
		sim:  sim,
		http: &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second},
		url:  baseURL(addr, ln.Addr()),
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		_ = s.http.Serve(ln) // returns ErrServerClosed after Close
	}()
	return s, nil
}

// URL returns the base URL, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return s.url }

// baseURL names the listener by the host that was asked for, so that a
// contract for "localhost:9090" says localhost, with the port actually
// bound (port 0 picks one). An empty or unspecified host (":9090",
// "0.0.0.0:9090") becomes 127.0.0.1: a URL needs one host, and loopback
// works from this machine.
func baseURL(requested string, bound net.Addr) string {
	host, _, err := net.SplitHostPort(requested)
	_, port, err2 := net.SplitHostPort(bound.String())
	if err != nil || err2 != nil {
		return "http://" + bound.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Sim returns the simulator, for scripting faults and counting objects.
func (s *Server) Sim() *Sim { return s.sim }

// Close stops listening, closes every connection and then the simulator.
// It does not wait out slow responses: their handlers are woken and return.
func (s *Server) Close() error {
	err := s.http.Close()
	_ = s.sim.Close()
	<-s.done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
