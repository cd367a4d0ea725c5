"""Certificates that TLS tests make for themselves (``trustme``): a test authority, and a
certificate of 127.0.0.1 it signed, written as files a server and its clients are given."""

from __future__ import annotations

from pathlib import Path

import trustme


def certificate_files(folder: Path) -> trustme.CA:
    """``cert.pem`` and ``key.pem`` (a certificate of 127.0.0.1) and ``ca.pem`` (its
    authority) in ``folder``; the authority."""
    authority = trustme.CA()
    issued = authority.issue_cert("127.0.0.1")
    issued.private_key_pem.write_to_path(str(folder / "key.pem"))
    issued.cert_chain_pems[0].write_to_path(str(folder / "cert.pem"))
    authority.cert_pem.write_to_path(str(folder / "ca.pem"))
    return authority
