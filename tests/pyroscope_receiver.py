#!/usr/bin/env python3
# A tiny stand-in for Pyroscope's ingest endpoint, for tests/continuous.test.
# Listens on 127.0.0.1 only and stops by itself (--max-seconds,
# --max-requests), or gracefully on SIGTERM: a request being handled is
# finished (stored and answered) first, so stopping it never makes a client
# see a failure for a profile that was stored.
#
#   pyroscope_receiver.py serve --dir DIR [--port N] [--port-file FILE]
#                               [--status CODE] [--max-seconds S] [--max-requests N]
#       POST /ingest?name=..&from=..&until=..&format=pprof... with the profile
#       in the multipart/form-data file field "profile" (Pyroscope's server
#       API reference, pprof format). Each profile is stored once per
#       from/until as DIR/profiles/FROM-UNTIL.pb.gz (a repeat is answered 200
#       but not stored again); every request is logged as one JSON line in
#       DIR/requests.jsonl (query, X-Scope-OrgID, Authorization, form fields,
#       dup, status).
#       --status CODE answers CODE to every well-formed request without
#       storing it. --port 0 (default) picks a free port; --port-file gets it.
#       POST /v1development/profiles (OTLP/HTTP): the body must be a gzipped
#       (Content-Encoding: gzip) application/x-protobuf request; it is stored
#       once as DIR/otlp/SHA256.pb (gunzipped; a repeat of the same bytes is
#       answered 200 but not stored again, "dup") and logged like the rest.
#   pyroscope_receiver.py inspect FILE
#       gunzips a profile and decodes profile.proto by hand (an independent
#       reader): prints JSON with the number of samples, their summed first
#       value ("count": samples/count), sample types, period,
#       time and duration, and every string label key with its values.
import argparse
import gzip
import hashlib
import http.server
import json
import os
import signal
import sys
import threading
import urllib.parse

from pbdecode import fields, varint

LOCK = threading.Lock()


# ---- multipart/form-data ---------------------------------------------------------


def content_type_boundary(ctype):
    kind, _, params = ctype.partition(";")
    if kind.strip().lower() != "multipart/form-data":
        return None
    for p in params.split(";"):
        k, _, v = p.strip().partition("=")
        if k.lower() == "boundary":
            return v.strip('"').encode()
    return None


def parse_multipart(body, boundary):
    """{field name: (filename, content type, bytes)}; raises ValueError."""
    delim = b"--" + boundary
    if not body.startswith(delim):
        raise ValueError("body does not start with the boundary")
    fields = {}
    pos = len(delim)
    while True:
        if body[pos:pos + 2] == b"--":
            return fields
        if body[pos:pos + 2] != b"\r\n":
            raise ValueError("no CRLF after a boundary")
        head_end = body.find(b"\r\n\r\n", pos + 2)
        if head_end < 0:
            raise ValueError("part without a header end")
        headers = {}
        for line in body[pos + 2:head_end].split(b"\r\n"):
            k, _, v = line.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        end = body.find(b"\r\n" + delim, head_end + 4)
        if end < 0:
            raise ValueError("part without a closing boundary")
        disp = headers.get("content-disposition", "")
        params = {}
        for p in disp.split(";")[1:]:
            k, _, v = p.strip().partition("=")
            params[k.lower()] = v.strip('"')
        fields[params.get("name", "")] = (params.get("filename"),
                                          headers.get("content-type"),
                                          body[head_end + 4:end])
        pos = end + 2 + len(delim)


# ---- the server ------------------------------------------------------------------


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as libcurl likes it

    def log_message(self, fmt, *args):
        pass

    def answer(self, status, text):
        data = (text + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if not size:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def do_POST(self):
        srv = self.server
        url = urllib.parse.urlsplit(self.path)
        body = self.read_body()
        with LOCK:
            status, text = self.handle_ingest(srv, url, body)
            self.answer(status, text)
            srv.requests += 1
            if srv.max_requests and srv.requests >= srv.max_requests:
                srv.done.set()

    def handle_otlp(self, srv, body):
        rec = {"path": self.path, "size": len(body), "otlp": True,
               "content_type": self.headers.get("Content-Type", ""),
               "content_encoding": self.headers.get("Content-Encoding", ""),
               "tenant": self.headers.get("X-Scope-OrgID")}
        status, text = 200, "{}"
        try:
            if rec["content_type"] != "application/x-protobuf":
                raise ValueError("Content-Type %r" % rec["content_type"])
            if rec["content_encoding"] != "gzip":
                raise ValueError("Content-Encoding %r" % rec["content_encoding"])
            raw = gzip.decompress(body)
            rec["sha256"] = hashlib.sha256(raw).hexdigest()
            if srv.status != 200:
                status, text = srv.status, "refused by --status"
            else:
                path = os.path.join(srv.dir, "otlp", rec["sha256"] + ".pb")
                rec["dup"] = os.path.exists(path)
                if not rec["dup"]:
                    with open(path + ".tmp", "wb") as f:
                        f.write(raw)
                    os.rename(path + ".tmp", path)
        except (ValueError, OSError, EOFError) as e:
            status, text = 400, "bad request: %s" % e
        rec["status"] = status
        with open(os.path.join(srv.dir, "requests.jsonl"), "a") as f:
            f.write(json.dumps(rec, sort_keys=True) + "\n")
        return status, text

    def handle_ingest(self, srv, url, body):
        if url.path == "/v1development/profiles":
            return self.handle_otlp(srv, body)
        q = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        rec = {"path": url.path, "query": q,
               "tenant": self.headers.get("X-Scope-OrgID"),
               "authorization": self.headers.get("Authorization"),
               "content_type": self.headers.get("Content-Type", ""),
               "size": len(body)}
        status, text = 200, "ok"
        try:
            if url.path != "/ingest":
                raise LookupError("no such endpoint")
            boundary = content_type_boundary(rec["content_type"])
            if not boundary:
                raise ValueError("not multipart/form-data")
            fields = parse_multipart(body, boundary)
            rec["fields"] = sorted(fields)
            if "profile" not in fields:
                raise ValueError("no form field 'profile'")
            data = fields["profile"][2]
            rec["profile_bytes"] = len(data)
            if data[:2] != b"\x1f\x8b":
                raise ValueError("the profile is not gzip")
            frm, until = int(q["from"]), int(q["until"])
            for k in ("name", "format"):
                if k not in q:
                    raise ValueError("no %s parameter" % k)
            rec["from"], rec["until"] = frm, until
            if srv.status != 200:
                status, text = srv.status, "refused by --status"
            else:
                path = os.path.join(srv.dir, "profiles", "%d-%d.pb.gz" % (frm, until))
                rec["dup"] = os.path.exists(path)
                if not rec["dup"]:
                    with open(path + ".tmp", "wb") as f:
                        f.write(data)
                    os.rename(path + ".tmp", path)
        except LookupError as e:
            status, text = 404, str(e)
        except (ValueError, KeyError) as e:
            status, text = 400, "bad request: %s" % e
        rec["status"] = status
        with open(os.path.join(srv.dir, "requests.jsonl"), "a") as f:
            f.write(json.dumps(rec, sort_keys=True) + "\n")
        return status, text


def serve(args):
    os.makedirs(os.path.join(args.dir, "profiles"), exist_ok=True)
    os.makedirs(os.path.join(args.dir, "otlp"), exist_ok=True)
    http.server.ThreadingHTTPServer.allow_reuse_address = True
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    srv.dir, srv.status, srv.requests = args.dir, args.status, 0
    srv.max_requests = args.max_requests
    srv.done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: srv.done.set())
    signal.signal(signal.SIGINT, lambda *_: srv.done.set())
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write("%d\n" % srv.server_address[1])
        os.rename(args.port_file + ".tmp", args.port_file)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    srv.done.wait(args.max_seconds)
    # Wait out the request in progress, then leave without taking another.
    LOCK.acquire()
    srv.socket.close()
    os._exit(0)


# ---- profile.proto, decoded by hand (pbdecode.py) ----------------------------------


def inspect(path):
    with open(path, "rb") as f:
        raw = gzip.decompress(f.read())
    strings, types, samples, labels = [], [], [], []
    out = {"time_nanos": 0, "duration_nanos": 0, "period": 0}
    for num, _, v in fields(raw):
        if num == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif num == 1:
            types.append({n: x for n, _, x in fields(v)})
        elif num == 2:
            samples.append(v)
        elif num in (9, 10, 12):
            out[{9: "time_nanos", 10: "duration_nanos", 12: "period"}[num]] = v
    count = 0
    for s in samples:
        for num, wt, v in fields(s):
            if num == 2 and wt == 2 and v:
                count += varint(v, 0)[0]  # packed values: the first is the count
            elif num == 3:
                lab = {n: x for n, _, x in fields(v)}
                if lab.get(2):
                    labels.append((strings[lab[1]], strings[lab[2]]))
    found = {}
    for k, v in labels:
        found.setdefault(k, set()).add(v)
    out.update({
        "samples": len(samples),
        "count": count,
        "sample_types": [[strings[t.get(1, 0)], strings[t.get(2, 0)]] for t in types],
        "labels": {k: sorted(v) for k, v in sorted(found.items())},
    })
    print(json.dumps(out, sort_keys=True))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--dir", required=True)
    s.add_argument("--port", type=int, default=0)
    s.add_argument("--port-file")
    s.add_argument("--status", type=int, default=200)
    s.add_argument("--max-seconds", type=float, default=120)
    s.add_argument("--max-requests", type=int, default=10000)
    i = sub.add_parser("inspect")
    i.add_argument("file")
    args = ap.parse_args()
    if args.cmd == "serve":
        serve(args)
    else:
        inspect(args.file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
