"""`kg serve`: a local SPARQL endpoint over the built graph."""

from __future__ import annotations

import sys

import click

from kg.cli.common import allow_service_option, base_option, graph_option, timeout_option


@click.command()
@graph_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (loopback by default: this machine only).")
@click.option("--port", default=7878, show_default=True, type=click.IntRange(0, 65535), help="TCP port (0: any free port).")
@base_option
@timeout_option
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 64), help="Processes running queries (each opens the store read-only).")
@allow_service_option
@click.option(
    "--allow-host", "allow_hosts", multiple=True, metavar="NAME",
    help="Also answer requests for this host name (repeatable). Addresses, localhost and --host are answered; "
    "other names get 403, so a web page cannot reach the endpoint by pointing its own name at this machine.",
)
def serve(graph_dir: str, host: str, port: int, base: str, timeout: float, workers: int, allow_service: bool, allow_hosts: tuple[str, ...]) -> None:
    """Serve the graph as a read-only SPARQL 1.1 endpoint at http://HOST:PORT/sparql.

    Every refused request is logged as one line on stderr.

    \b
    curl -H 'Accept: text/csv' --data-urlencode 'query=SELECT * WHERE { ?s ?p ?o } LIMIT 3' \\
         http://127.0.0.1:7878/sparql
    """
    from kg.sparql.serve import endpoint_url, open_server

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    server = open_server(
        graph_dir, host=host, port=port, base=base, timeout=timeout or 1e9, workers=workers, allow_service=allow_service, log=log, allow_hosts=allow_hosts,
    )
    click.echo(f"SPARQL endpoint: {endpoint_url(server)}  (Ctrl-C to stop)", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
