"""A tiny round-robin TCP load balancer, to put in front of proxy replicas in the
scale-out example (examples/scale_out.sh). Each client connection goes to the next
backend in turn and its bytes are piped both ways, so HTTP keep-alive and streaming
(SSE) pass unchanged. A backend that refuses the connection is skipped. For production,
use any load balancer you run already (nginx, HAProxy, Envoy, a cloud LB, a Kubernetes
Service): the replicas share nothing but the optional Redis cache.

    python examples/round_robin.py --port 8100 127.0.0.1:8101 127.0.0.1:8102
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging

log = logging.getLogger("round_robin")


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


def handler(backends: list[tuple[str, int]]) -> object:
    turn = itertools.cycle(range(len(backends)))

    async def handle(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        for _ in backends:  # the next backend that accepts the connection
            host, port = backends[next(turn)]
            try:
                reader, writer = await asyncio.open_connection(host, port)
                break
            except OSError:
                log.warning("backend %s:%d refused the connection; trying the next", host, port)
        else:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, writer), pipe(reader, client_writer))

    return handle


async def main() -> None:
    parser = argparse.ArgumentParser(description="round-robin TCP load balancer")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("backends", nargs="+", help="HOST:PORT of each backend")
    args = parser.parse_args()
    backends = [(b.rsplit(":", 1)[0], int(b.rsplit(":", 1)[1])) for b in args.backends]
    server = await asyncio.start_server(handler(backends), args.host, args.port)  # type: ignore[arg-type]
    log.warning("round robin on %s:%d over %s", args.host, args.port, ", ".join(args.backends))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    asyncio.run(main())
