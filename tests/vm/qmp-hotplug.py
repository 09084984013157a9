#!/usr/bin/python3
"""Host side of the PCI VM's hotplug channel (tests/vm/run-vm.sh, RBLN_VM_PCI=1).

The guest asks for a hot-unplug or replug by writing a request file into the
results share (/run/vm/hotplug in the guest, OUTDIR/hotplug here):

    NAME.req    one line: "del ID" or "add ID" (ID: edu0 or edu1)

written under another name and renamed, so that it is whole when it appears.
This server runs the request on QEMU's monitor (QMP) and answers in

    NAME.done   "ok", or "error: WHY"

A "del" is device_del, answered once QEMU reports DEVICE_DELETED for that
device (the guest let it go: q35's hotplug, the driver's remove), or an error
after DEL_TIMEOUT seconds.  An "add" is device_add of an edu device into the
device's own root port (edu0 in rp0, edu1 in rp1).

    qmp-hotplug.py SOCKET DIR

Connects to each boot's QEMU in turn (the socket reappears with every boot),
until it is killed.
"""
import json
import os
import select
import socket
import sys
import time

DEL_TIMEOUT = int(os.environ.get("RBLN_QMP_DEL_TIMEOUT", "60"))	# seconds
PORTS = {"edu0": "rp0", "edu1": "rp1"}


def log(*args):
    print(time.strftime("%H:%M:%S"), *args, flush=True)


class Monitor:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buf = b""
        self.events = []
        greeting = self.read(10)
        if greeting is None or "QMP" not in greeting:
            raise ConnectionError(f"no QMP greeting: {greeting}")
        self.command("qmp_capabilities")

    def read(self, timeout):
        """The next message, or None when none came within timeout."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.sock], [], [], left)
            if not ready:
                return None
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("QEMU closed the monitor")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def command(self, name, **arguments):
        """Runs a command; returns its reply, keeping the events that came first."""
        self.sock.sendall(json.dumps({"execute": name, "arguments": arguments}).encode() + b"\n")
        while True:
            msg = self.read(30)
            if msg is None:
                raise TimeoutError(f"no reply to {name}")
            if "event" in msg:
                self.events.append(msg)
                continue
            return msg

    def wait_event(self, event, device, timeout):
        deadline = time.monotonic() + timeout
        while True:
            for i, msg in enumerate(self.events):
                if msg["event"] == event and msg.get("data", {}).get("device") == device:
                    del self.events[i]
                    return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            msg = self.read(left)
            if msg is not None and "event" in msg:
                self.events.append(msg)

    def poll_events(self):
        while True:
            msg = self.read(0)
            if msg is None:
                return
            if "event" in msg:
                log("event", json.dumps(msg))
                self.events.append(msg)
                del self.events[:-32]	# only recent ones matter


def run(mon, verb, dev):
    if dev not in PORTS:
        return f"error: unknown device {dev!r} (valid: {', '.join(PORTS)})"
    if verb == "del":
        mon.events = [e for e in mon.events
                      if not (e["event"] == "DEVICE_DELETED" and e.get("data", {}).get("device") == dev)]
        reply = mon.command("device_del", id=dev)
        if "error" in reply:
            return f"error: device_del {dev}: {reply['error'].get('desc')}"
        if not mon.wait_event("DEVICE_DELETED", dev, DEL_TIMEOUT):
            return f"error: no DEVICE_DELETED for {dev} within {DEL_TIMEOUT} s"
        return "ok"
    if verb == "add":
        reply = mon.command("device_add", driver="edu", id=dev, bus=PORTS[dev])
        if "error" in reply:
            return f"error: device_add {dev}: {reply['error'].get('desc')}"
        return "ok"
    return f"error: unknown request {verb!r} (valid: del ID, add ID)"


def serve(mon, outdir):
    while True:
        mon.poll_events()
        for name in sorted(os.listdir(outdir)):
            if not name.endswith(".req"):
                continue
            path = os.path.join(outdir, name)
            with open(path) as f:
                words = f.read().split()
            os.unlink(path)
            answer = run(mon, *words) if len(words) == 2 else f"error: malformed request {words!r}"
            log(name, " ".join(words), "->", answer)
            done = os.path.join(outdir, name[:-4] + ".done")
            with open(done + ".tmp", "w") as f:
                f.write(answer + "\n")
            os.rename(done + ".tmp", done)
        time.sleep(0.1)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: qmp-hotplug.py SOCKET DIR")
    sock, outdir = sys.argv[1:]
    while True:
        try:
            mon = Monitor(sock)
        except (FileNotFoundError, ConnectionRefusedError):
            time.sleep(0.2)
            continue
        log("connected to", sock)
        try:
            serve(mon, outdir)
        except (ConnectionError, OSError) as e:
            log("monitor gone:", e)
            time.sleep(0.2)


if __name__ == "__main__":
    main()
