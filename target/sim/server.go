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
		url:  "http://" + ln.Addr().String(),
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
