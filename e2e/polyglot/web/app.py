"""The Python web of the polyglot harness (e2e/polyglot): Flask, calling the
Go api through `requests`, with no OpenTelemetry code: run under
`opentelemetry-instrument` (opentelemetry-distro) with its default settings.

  GET /checkout/<id>  calls the api's /items/<id> and /quote/<id>

It prints "port N" then "ready" (API_URL names the Go api)."""

import os
import signal
import sys

import requests
from flask import Flask
from werkzeug.serving import make_server

app = Flask(__name__)
API = os.environ["API_URL"]
session = requests.Session()


@app.get("/checkout/<item>")
def checkout(item):
    stock = session.get(f"{API}/items/{item}", timeout=10)
    quote = session.get(f"{API}/quote/{item}", timeout=10)
    return {"stock": stock.json(), "quote": quote.json()}


if __name__ == "__main__":
    server = make_server("127.0.0.1", 0, app, threaded=True)
    print(f"port {server.server_port}", flush=True)
    print("ready", flush=True)
    # SIGTERM exits through atexit, where the SDK flushes its last spans.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)
