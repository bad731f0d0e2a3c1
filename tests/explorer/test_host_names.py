"""The names a server answers to: ``serving.allows`` over host names, IPv4 and IPv6 addresses."""

from __future__ import annotations

import ipaddress

from hypothesis import given
from hypothesis import strategies as st

from explorer.serving import allows, split_host

ADDRESSES = st.ip_addresses().map(
    lambda a: f"[{a.compressed}]" if isinstance(a, ipaddress.IPv6Address) else a.compressed
)
PORTS = st.integers(1, 65535)


@given(ADDRESSES, PORTS, PORTS)
def test_an_address_is_allowed_at_its_own_port_only(host, port, other):
    allowed = [f"{host}:{port}"]
    assert allows(allowed, f"{host}:{port}")
    assert allows(allowed, f"{host.upper()}:{port}")  # names are matched lowercased
    assert allows(allowed, f"{host}:{other}") == (other == port)
    assert split_host(f"{host}:{port}") == (host, str(port))


@given(ADDRESSES)
def test_no_port_means_80(host):
    assert allows([f"{host}:80"], host) and allows([host], f"{host}:80")


def test_wildcards_match_one_part_of_a_name_or_any_port():
    assert allows(["*.school.example:5006"], "a.school.example:5006")
    assert not allows(["*.school.example:5006"], "a.b.school.example:5006")
    assert allows(["school.example:*"], "school.example:81")
    assert not allows(["*:5006"], "[::1]:5006")  # a wildcard name is a host name's part


def test_malformed_hosts_match_nothing():
    allowed = ["localhost:5006", "[::1]:5006", "127.0.0.1:5006"]
    for host in [
        "",
        "[::1",
        "::1",
        "[::1]x",
        "a:b:c",
        "[::1]:5006:1",
        "localhost:5006 "[:-1] + "x",
    ]:
        assert not allows(allowed, host), host
