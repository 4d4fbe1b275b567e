#!/usr/bin/env python3
"""The testbed's WAN mode (docs/testbed.md): a TCP proxy on loopback that holds every byte for half
a round trip in each direction before passing it on, in front of the login node's sshd.

    wan_proxy.py LISTEN_PORT TARGET_PORT STATE_DIR PIDFILE

A new connection waits one round trip before anything passes (TCP's handshake, which the local
kernel does at once). The round trip in milliseconds is read from STATE_DIR/rtt_ms (default 40; checked every 100 ms, so
`echo 80 > rtt_ms` changes it for new bytes of open connections too). SIGUSR1 drops every open
connection at once (both sides see a reset), as a VPN or Wi-Fi change does; new connections are
accepted again right after. Loopback only; no netem needed."""

import asyncio
import os
import signal
import sys
import time

DEFAULT_RTT_MS = 40.0


class Rtt:
    def __init__(self, path):
        self.path = path
        self.value = DEFAULT_RTT_MS
        self.checked = 0.0

    def one_way(self):
        now = time.monotonic()
        if now - self.checked > 0.1:
            self.checked = now
            try:
                with open(self.path, encoding="ascii") as f:
                    self.value = max(0.0, float(f.read().strip() or DEFAULT_RTT_MS))
            except (OSError, ValueError):
                self.value = DEFAULT_RTT_MS
        return self.value / 2000.0


async def pipe(reader, writer, rtt):
    """Copies reader to writer, each chunk delivered one-way-delay after it arrived, in order."""
    queue = asyncio.Queue()

    async def deliver():
        while True:
            due, chunk = await queue.get()
            if chunk is None:
                break
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()

    sender = asyncio.ensure_future(deliver())
    try:
        while True:
            chunk = await reader.read(65536)
            queue.put_nowait((time.monotonic() + rtt.one_way(), chunk or None))
            if not chunk:
                break
        await sender
    finally:
        sender.cancel()


async def main():
    listen_port, target_port, state_dir, pidfile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    rtt = Rtt(os.path.join(state_dir, "rtt_ms"))
    open_writers = set()
    served = 0

    async def handle(client_reader, client_writer):
        nonlocal served
        served += 1
        # TCP's own handshake: the kernel accepted at once, a real network takes a round trip
        # before either side's first byte can travel (the client's bytes wait in the socket).
        await asyncio.sleep(2 * rtt.one_way())
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
        except OSError as e:
            print(f"wan-proxy: cannot reach 127.0.0.1:{target_port}: {e}", flush=True)
            client_writer.transport.abort()
            return
        pair = (client_writer, server_writer)
        open_writers.update(pair)
        try:
            await asyncio.gather(pipe(client_reader, server_writer, rtt), pipe(server_reader, client_writer, rtt))
        except (ConnectionError, OSError):
            pass
        finally:
            for w in pair:
                open_writers.discard(w)
                w.transport.abort()

    def drop():
        print(f"wan-proxy: SIGUSR1: dropping {len(open_writers) // 2} connection(s)", flush=True)
        for w in list(open_writers):
            w.transport.abort()
        open_writers.clear()

    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, drop)
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGTERM, lambda: stop.done() or stop.set_result(None))
    server = await asyncio.start_server(handle, "127.0.0.1", listen_port, reuse_address=True)
    with open(pidfile + ".new", "w", encoding="ascii") as f:
        f.write(f"{os.getpid()}\n")
    os.replace(pidfile + ".new", pidfile)
    print(f"wan-proxy: 127.0.0.1:{listen_port} -> 127.0.0.1:{target_port}, rtt from {rtt.path}", flush=True)
    await stop
    server.close()
    drop()
    print(f"wan-proxy: stopped after {served} connection(s)", flush=True)
    try:
        os.unlink(pidfile)
    except OSError:
        pass


if __name__ == "__main__":
    asyncio.run(main())
