"""A local HTTP server for the fetch tests: never the internet, every misbehaviour on demand.

:class:`FetchServer` runs :mod:`http.server` in a thread on 127.0.0.1 and answers
each path from a :class:`Route`: a body (honouring HTTP Range requests or
ignoring them), a status, a raw ``Content-Length`` value (or none at all), a
redirect, an endless stream of zeros, or a transfer that stops in the middle
(then hangs up, or stalls). It counts the requests per path and keeps the
headers of each, so a test can tell "no second request", "the retry asked for
``Range: bytes=N-``" or "the redirect carried no credentials".
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

AUTO = "auto"


@dataclass
class Route:
    """How one path is answered.

    Attributes
    ----------
    body:
        The resource's bytes.
    status:
        An HTTP status other than 200 is sent as an error page (or a redirect with ``location``).
    length:
        The ``Content-Length`` header as sent: ``AUTO`` (the true length), a raw
        string (``"²"``, ``"-1"``), or ``None`` (no header: the body ends when
        the server closes the connection).
    ranges:
        Answer ``Range: bytes=N-`` with 206 and the rest; when ``False`` the
        header is ignored and the whole body is sent with 200.
    cut:
        How many of the first answers stop after half of what they should send.
    stall:
        Seconds to sleep after a cut before hanging up (a stalled server).
    endless:
        Send zeros until the client hangs up (no length).
    location:
        Redirect target (with a 3xx ``status``).
    auth:
        When set, the ``Authorization`` header required (401 otherwise).
    """

    body: bytes = b""
    status: int = 200
    length: str | None = AUTO
    ranges: bool = True
    cut: int = 0
    stall: float = 0.0
    endless: bool = False
    location: str | None = None
    auth: str | None = None
    answered: int = field(default=0, repr=False)


class FetchServer:
    """The server: ``routes`` maps a path (without query) to its :class:`Route`."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.hits: dict[str, int] = {}
        self.requests: dict[str, list[dict[str, str]]] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                path = self.path.split("?", 1)[0]
                outer.hits[path] = outer.hits.get(path, 0) + 1
                outer.requests.setdefault(path, []).append({k.lower(): v for k, v in self.headers.items()})
                route = outer.routes.get(path)
                if route is None:
                    self.send_error(404)
                    return
                if route.auth is not None and self.headers.get("Authorization") != route.auth:
                    self.send_error(401)
                    return
                if route.location is not None:
                    self.send_response(route.status)
                    self.send_header("Location", route.location)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if route.status != 200:
                    self.send_error(route.status)
                    return
                if route.endless:
                    self.send_response(200)
                    self.end_headers()
                    block = b"\0" * 65536
                    try:
                        while True:
                            self.wfile.write(block)
                    except OSError:
                        return
                body, start = route.body, 0
                match = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
                if match and route.ranges and int(match.group(1)) < len(route.body):
                    start = int(match.group(1))
                    body = route.body[start:]
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(route.body) - 1}/{len(route.body)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("ETag", '"v1"')
                if route.length == AUTO:
                    self.send_header("Content-Length", str(len(body)))
                elif route.length is not None:
                    self.send_header("Content-Length", route.length)
                self.end_headers()
                route.answered += 1
                if route.answered <= route.cut:
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    if route.stall:
                        time.sleep(route.stall)
                    self.close_connection = True  # the server hangs up in mid-body
                    return
                self.wfile.write(body)
                self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        """The full URL of ``path`` on this server."""
        return self.base + path

    def close(self) -> None:
        """Stop serving (stalled handler threads are daemons and die with the tests)."""
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
