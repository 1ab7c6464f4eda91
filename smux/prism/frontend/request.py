"""The front end's view of a client's byte stream: is there a whole HTTP/1.1
request at its front, and what does its head say (for the rules).  Parsed with
httptools (llhttp, in C): this runs once per hand-off, on the start-up path."""
import httptools

import rules

# The longest request head accepted; the whole request (head + body) is bounded
# by the front end's --max-request-bytes because it holds it until the hand-off.
MAX_HEAD = 64 * 1024


class BadRequest(ValueError):
    def __init__(self, status, reason):
        super().__init__(reason)
        self.status = status


class _First:
    """httptools callbacks that keep the first request of the buffer (later,
    pipelined ones are the next hand-offs')."""

    def __init__(self):
        self.url = b""
        self.headers = []
        self.method = None
        self.head_done = self.complete = False
        self.parser = None

    def on_url(self, url):
        if not self.head_done:
            self.url += url

    def on_header(self, name, value):
        if not self.head_done:
            self.headers.append((name.decode("latin-1"), value.decode("latin-1")))

    def on_headers_complete(self):
        if not self.head_done:
            self.head_done = True
            self.method = self.parser.get_method().decode("latin-1")

    def on_message_complete(self):
        self.complete = True


def parse(buf):
    """A rules.Request when buf starts with a whole request (head and body),
    None when more bytes are needed; BadRequest (status, reason) otherwise."""
    first = _First()
    first.parser = httptools.HttpRequestParser(first)
    try:
        first.parser.feed_data(buf)
    except httptools.HttpParserUpgrade:
        pass   # served as a plain request: the upgrade is not handed over
    except httptools.HttpParserError as e:
        if not first.complete:   # a bad pipelined request is its own hand-off's problem
            raise BadRequest(400, f"bad request: {e}") from None
    if not first.head_done and len(buf) > MAX_HEAD:
        raise BadRequest(431, f"request head over {MAX_HEAD} bytes")
    if not first.complete:
        return None
    version = first.parser.get_http_version()
    if version not in ("1.0", "1.1"):
        raise BadRequest(505, f"HTTP/{version}: HTTP/1.0 and 1.1 only")
    req = rules.Request(first.method, first.url.decode("latin-1"), first.headers)
    if version == "1.1" and "host" not in req.headers:
        raise BadRequest(400, "HTTP/1.1 request without Host")   # RFC 9112 section 3.2
    return req
