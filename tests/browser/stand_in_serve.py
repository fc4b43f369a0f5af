#!/usr/bin/python3
"""A stand-in for attn serve, for the live page's browser test until the server is there to drive it.

    stand_in_serve.py LIVE_PAGE.html ATTN [QUERY PAGE.html]...

On 127.0.0.1, a free port; prints "attn: serving on http://127.0.0.1:PORT/ (Ctrl-C stops)" on stderr, as
attn serve does, and serves until SIGTERM:
  GET /?QUERY            -> the PAGE.html given for exactly that QUERY, or else LIVE_PAGE.html (a stand-in:
                            attn serve makes the live page of any query; the test writes the few it loads)
  GET /page/LESSON?K=V&  -> `ATTN LESSON --K V ... --format html` ("tour": attn tour): 200 and the page,
                            or 400 and {"error": the last line attn wrote on stderr}
  anything else          -> 404
It runs the real attn, so what the page draws is what the command line computes; it checks nothing a
request names (the real server refuses file-naming options and bounds the request): loopback only, for
the test's own requests.
"""
import json
import signal
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlsplit


class Handler(BaseHTTPRequestHandler):
    def send(self, status, kind, body):
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the page dropped an answer it no longer wants (a newer request aborted it)

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/":
            pages = dict(zip(sys.argv[3::2], sys.argv[4::2]))
            with open(pages.get(url.query, sys.argv[1]), encoding="utf-8") as f:
                return self.send(200, "text/html; charset=utf-8", f.read())
        if url.path.startswith("/page/"):
            lesson = unquote(url.path[len("/page/"):])
            args = [sys.argv[2], lesson]
            for key, value in parse_qsl(url.query, keep_blank_values=True):
                args += ["--" + key, value]
            run = subprocess.run(args + ["--format", "html"], capture_output=True, text=True, errors="replace")
            if run.returncode == 0:
                return self.send(200, "text/html; charset=utf-8", run.stdout)
            lines = run.stderr.strip().splitlines()
            return self.send(400, "application/json", json.dumps({"error": lines[-1] if lines else "attn failed"}))
        return self.send(404, "application/json", json.dumps({"error": "attn: no such page"}))

    def log_message(self, *args):
        pass  # nothing is logged, as attn serve without --log


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print("attn: serving on http://127.0.0.1:%d/ (Ctrl-C stops)" % server.server_address[1], file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
