"""TLS on loopback for tests: a self-signed certificate (for https client metadata documents, a TLS Redis store),
its own CA, so a client trusts it with `cafile=` the certificate; and an https server of client metadata documents."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from server.tests.support.oauth_browser import document_server


def self_signed(directory: Path, host: str) -> tuple[Path, Path]:
    """A certificate for `host` (a DNS name, or an IP address such as 127.0.0.1) signed by its own key, valid from a
    day ago for a week; written with its key into `directory` (made if missing): (certificate file, key file)."""
    try:
        subject: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        subject = x509.DNSName(host)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(x509.SubjectAlternativeName([subject]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


@contextmanager
def https_documents(
    folder: Path, documents: dict[str, Any] | None = None, host: str = "127.0.0.1"
) -> Iterator[tuple[str, dict[str, Any], ssl.SSLContext]]:
    """Serves client metadata documents over https with a certificate for `host` (loopback, or a name the test's
    resolver sends there): (base URL, the path -> document table, a client TLS context trusting the certificate)."""
    cert, key = self_signed(folder, host)
    with document_server(documents, tls=(cert, key), host=host) as (base, table):
        yield base, table, ssl.create_default_context(cafile=str(cert))
