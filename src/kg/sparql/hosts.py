"""Which host names `kg serve` answers to: a guard against DNS rebinding.

A web page at ``http://evil.example:7878/`` whose owner points ``evil.example`` at 127.0.0.1
makes the visitor's browser send its requests to a local `kg serve`, and read the answers, as
the page's own origin. Such requests carry ``Host: evil.example``; so `kg serve` answers only
requests whose ``Host`` is an IP address (no page can be served from a name that is one and
rebind it), ``localhost``, the address it was bound to, or a name allowed with ``--allow-host``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HostCheck:
    """Which ``Host`` headers the server answers: an IP address (no page can rebind one), the
    name ``localhost``, and the names in `allowed` (``--allow-host``). A request without the
    header (HTTP/1.0 by hand) is answered: browsers always send it."""

    allowed: frozenset[str] = frozenset()

    def refuses(self, header: str | None) -> str | None:
        """The host name of `header` when it is not one to answer, else None."""
        if header is None:
            return None
        name = host_name(header)
        if name == "localhost" or name in self.allowed or _is_address(name):
            return None
        return name or header.strip() or "(empty)"


def host_name(header: str) -> str:
    """``Example.org.:7878`` → ``example.org``; ``[::1]:7878`` → ``::1``."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rpartition(":")[0].rstrip(".") if value.count(":") == 1 else value.rstrip(".")


def _is_address(name: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True
