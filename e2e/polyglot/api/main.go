// The Go api of the polyglot harness (e2e/polyglot): net/http with otelhttp on
// both sides, exporting OTLP/HTTP protobuf where OTEL_EXPORTER_OTLP_ENDPOINT says.
//
//	GET /items/{id}  asks the Java store for /stock/{id}
//	GET /quote/{id}  works locally (5 ms); the line "step" on stdin adds 25 ms
//
// It prints "port N" then "ready", and "switched <epoch ms>" after a step.
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

var extra atomic.Int64 // ms added to /quote

func main() {
	ctx := context.Background()
	// Endpoint, headers and service name come from the standard OTEL_* variables.
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exporter:", err)
		os.Exit(1)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})

	store := os.Getenv("STORE_URL")
	client := &http.Client{Transport: otelhttp.NewTransport(http.DefaultTransport)}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), "GET", store+"/stock/"+r.PathValue("id"), nil)
		res, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		w.Header().Set("content-type", "application/json")
		fmt.Fprintf(w, `{"item":%q,"stock":%s}`, r.PathValue("id"), body)
	})
	mux.HandleFunc("GET /quote/{id}", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(5+extra.Load()) * time.Millisecond)
		w.Header().Set("content-type", "application/json")
		fmt.Fprintf(w, `{"item":%q,"price":42}`, r.PathValue("id"))
	})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: otelhttp.NewHandler(mux, "api")}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("port %d\nready\n", ln.Addr().(*net.TCPAddr).Port)

	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			if in.Text() == "step" {
				extra.Store(25)
				fmt.Printf("switched %d\n", time.Now().UnixMilli())
			}
		}
	}()

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	_ = srv.Shutdown(ctx)
	_ = tp.Shutdown(ctx) // flushes the last spans
}
