#!/usr/bin/env python3
"""A stand-in for the Kubernetes API server's discovery endpoints, so that
`kubectl apply --dry-run=client` can map deploy/'s kinds to resources without
a cluster.  It knows only the kinds deploy/ uses, and every object lookup
answers 404 (nothing exists yet: kubectl then reports "created (dry run)").
It is not an API server: no validation, no storage, no admission.

  api-discovery.py PORTFILE     listens on a free loopback port, writes it to PORTFILE
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# group/version -> [(resource, kind, namespaced)]
RESOURCES = {
    "v1": [("namespaces", "Namespace", False), ("services", "Service", True)],
    "apps/v1": [("daemonsets", "DaemonSet", True)],
    "node.k8s.io/v1": [("runtimeclasses", "RuntimeClass", False)],
    "monitoring.coreos.com/v1": [("servicemonitors", "ServiceMonitor", True)],
}


def resource_list(gv):
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
            "resources": [{"name": r, "singularName": "", "namespaced": ns, "kind": k,
                           "verbs": ["create", "get", "list", "patch"]} for r, k, ns in RESOURCES[gv]]}


def group_list():
    groups = []
    for gv in RESOURCES:
        if "/" in gv:
            g, v = gv.split("/")
            ver = {"groupVersion": gv, "version": v}
            groups.append({"name": g, "versions": [ver], "preferredVersion": ver})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = self.path.split("?")[0].rstrip("/")
        if path == "/api":
            return self.send(200, {"kind": "APIVersions", "versions": ["v1"]})
        if path == "/apis":
            return self.send(200, group_list())
        if path == "/api/v1":
            return self.send(200, resource_list("v1"))
        if path.startswith("/apis/") and path[len("/apis/"):] in RESOURCES:
            return self.send(200, resource_list(path[len("/apis/"):]))
        self.send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                        "reason": "NotFound", "code": 404, "message": "not found"})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1], "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
