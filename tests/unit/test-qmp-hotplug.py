#!/usr/bin/python3
"""The PCI VM's hotplug server (tests/vm/qmp-hotplug.py) against a fake QEMU
monitor: a device_del is answered "ok" only once DEVICE_DELETED came for that
device (not for another one), an error when it never comes, QEMU's own errors
and bad requests are passed on, and a device_add goes into the device's own
root port.  Exit 0 iff every case came out as it must."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "..", "vm", "qmp-hotplug.py")


class FakeQemu(threading.Thread):
    """Answers QMP like QEMU.  edu1's first device_del is acknowledged and
    followed by a DEVICE_DELETED for edu0 only (another device's event), its
    second by edu1's own; edu0's is acknowledged and never deleted (a guest
    that does not let go).  device_add is recorded."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(1)
        self.commands = []
        self.edu1_dels = 0

    def send(self, conn, msg):
        conn.sendall(json.dumps(msg).encode() + b"\n")

    def run(self):
        conn, _ = self.listener.accept()
        self.send(conn, {"QMP": {"version": {}, "capabilities": []}})
        buf = b""
        while True:
            chunk = conn.recv(4096)
            if not chunk:
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                cmd = json.loads(line)
                self.commands.append(cmd)
                name, args = cmd["execute"], cmd.get("arguments", {})
                if name == "device_del" and args.get("id") == "edu1":
                    self.edu1_dels += 1
                    self.send(conn, {"return": {}})
                    time.sleep(0.3)
                    deleted = "edu0" if self.edu1_dels == 1 else "edu1"
                    self.send(conn, {"event": "DEVICE_DELETED", "data": {"device": deleted}})
                elif name == "device_add" and args.get("bus") is None:
                    self.send(conn, {"error": {"class": "GenericError", "desc": "no bus"}})
                else:
                    self.send(conn, {"return": {}})


def ask(outdir, name, request, timeout=10):
    with open(os.path.join(outdir, "." + name), "w") as f:
        f.write(request + "\n")
    os.rename(os.path.join(outdir, "." + name), os.path.join(outdir, name + ".req"))
    done = os.path.join(outdir, name + ".done")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(done):
            with open(done) as f:
                return f.read().strip()
        time.sleep(0.05)
    return None


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "qmp.sock")
        outdir = os.path.join(tmp, "hotplug")
        os.mkdir(outdir)
        qemu = FakeQemu(sock)
        qemu.start()
        env = dict(os.environ, RBLN_QMP_DEL_TIMEOUT="1")
        server = subprocess.Popen([sys.executable, SERVER, sock, outdir], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            cases = [
                ("del edu1: another device's DEVICE_DELETED is not its", "a0", "del edu1",
                 "error: no DEVICE_DELETED for edu1 within 1 s"),
                ("del edu1: answered once its DEVICE_DELETED came", "a", "del edu1", "ok"),
                ("del edu0: an event for edu0 from before the request does not count", "b",
                 "del edu0", "error: no DEVICE_DELETED for edu0 within 1 s"),
                ("add edu1", "c", "add edu1", "ok"),
                ("an unknown device", "d", "del edu9", "error: unknown device 'edu9' (valid: edu0, edu1)"),
                ("an unknown verb", "e", "eject edu1", "error: unknown request 'eject' (valid: del ID, add ID)"),
                ("a malformed request", "f", "del", "error: malformed request ['del']"),
            ]
            for what, name, request, want in cases:
                got = ask(outdir, name, request)
                ok = got == want
                failures += not ok
                print(f"{'ok' if ok else 'FAIL'}: {what}" + ("" if ok else f": got {got!r}, want {want!r}"))
            adds = [c for c in qemu.commands if c["execute"] == "device_add"]
            ok = adds == [{"execute": "device_add", "arguments": {"driver": "edu", "id": "edu1", "bus": "rp1"}}]
            failures += not ok
            print(f"{'ok' if ok else 'FAIL'}: device_add puts edu1 into rp1" + ("" if ok else f": {adds}"))
        finally:
            server.kill()
            out = server.communicate()[0].decode()
    if failures:
        print(out)
    print(f"qmp-hotplug: {len(cases) + 1 - failures} of {len(cases) + 1} cases as they must be")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
