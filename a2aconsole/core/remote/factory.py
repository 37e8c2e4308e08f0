"""The SDK's client factory making the console's lenient transports (`transports.py`, `transports_03.py`), which
`client.Connection` uses: for a 1.0 interface and a 0.3 one, JSON-RPC and HTTP+JSON, picked as the SDK picks."""

from __future__ import annotations

from a2a.client import ClientConfig, ClientFactory
from a2a.client.transports import ClientTransport
from a2a.compat.v0_3.versions import is_legacy_version
from a2a.types import AgentCard

from a2aconsole.core.remote.transports import LenientJsonRpcTransport, LenientRestTransport
from a2aconsole.core.remote.transports_03 import LenientCompatJsonRpcTransport, LenientCompatRestTransport


def lenient_factory(config: ClientConfig) -> ClientFactory:
    """The SDK's client factory, its transports the lenient ones, for a 1.0 interface and a 0.3 one, JSON-RPC and
    HTTP+JSON. The interface is picked as the SDK picks it."""
    factory = ClientFactory(config)
    http = config.httpx_client
    assert http is not None, "the console's calls share one http client"

    def legacy(card: AgentCard, url: str, binding: str) -> bool:
        interface = ClientFactory._find_best_interface(
            list(card.supported_interfaces), protocol_bindings=[binding], url=url
        )
        return interface is not None and is_legacy_version(interface.protocol_version)

    def jsonrpc(card: AgentCard, url: str, config: ClientConfig) -> ClientTransport:
        if legacy(card, url, "JSONRPC"):
            return LenientCompatJsonRpcTransport(http, card, url, is_shared_httpx=True)
        return LenientJsonRpcTransport(http, card, url, is_shared_httpx=True)

    def rest(card: AgentCard, url: str, config: ClientConfig) -> ClientTransport:
        if legacy(card, url, "HTTP+JSON"):
            return LenientCompatRestTransport(http, card, url, is_shared_httpx=True)
        return LenientRestTransport(http, card, url, is_shared_httpx=True)

    factory.register("JSONRPC", jsonrpc)
    factory.register("HTTP+JSON", rest)
    return factory
