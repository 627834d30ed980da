"""An :class:`ssl.SSLContext` from Kafka's TLS settings: PEM files, inline PEM, PKCS12 and JKS stores.

* Trust: a PEM file or inline certificates go straight to OpenSSL; a PKCS12 store is read with
  ``cryptography``; a JKS store is first converted to PKCS12 by the JDK's ``keytool`` (passwords handed over
  in environment variables, never on a command line) inside a private temporary folder.
* Client certificate (mutual TLS): a PEM file (key and chain in one file, as Kafka's PEM key store) is
  loaded as is; an inline key, or the key of a PKCS12/JKS store, is written re-encrypted under a one-time
  random password into a private (0700) temporary folder, loaded, and the folder is removed at once.
* Hostname verification is on unless ``ssl.endpoint.identification.algorithm`` is empty; TLS 1.2 is the
  lowest version.
"""

from __future__ import annotations

import os
import secrets
import shutil
import ssl
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kafka_balancer.errors import InputError
from kafka_balancer.security.settings import KeyStore, Secret, SecuritySettings, TrustStore

JKS_MAGIC = b"\xfe\xed\xfe\xed"


@contextmanager
def private_dir() -> Iterator[Path]:
    """A fresh 0700 folder, removed with everything in it on exit."""
    d = Path(tempfile.mkdtemp(prefix="kafka-balancer-tls-"))
    try:
        os.chmod(d, 0o700)
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def _reveal(s: Secret | None) -> str | None:
    return None if s is None else s.reveal()


def _is_jks(data: bytes) -> bool:
    return data[:4] == JKS_MAGIC


def _jks_to_pkcs12(data: bytes, store_pw: str | None, key_pw: str | None, prop: str, workdir: Path) -> bytes:
    """Convert a JKS store to PKCS12 with the JDK's keytool (store password = ``store_pw``)."""
    keytool = shutil.which("keytool") or (
        str(Path(os.environ["JAVA_HOME"]) / "bin" / "keytool") if os.environ.get("JAVA_HOME") else None)
    if keytool is None or not Path(keytool).exists():
        raise InputError(f"{prop}: reading a JKS store needs the JDK's keytool, which is not on PATH",
                         hint="install a JDK, or convert the store once: keytool -importkeystore "
                         "-srckeystore X.jks -destkeystore X.p12 -deststoretype PKCS12")
    src, dst = workdir / "in.jks", workdir / "out.p12"
    _write_private(src, data)
    pw = store_pw or "changeit"  # a JKS truststore's password only guards its integrity
    env = {**os.environ, "KB_SRC_PW": pw, "KB_DST_PW": pw, "KB_KEY_PW": key_pw or pw}
    cmd = [keytool, "-importkeystore", "-noprompt", "-srckeystore", str(src), "-srcstoretype", "JKS",
           "-srcstorepass:env", "KB_SRC_PW", "-destkeystore", str(dst), "-deststoretype", "PKCS12",
           "-deststorepass:env", "KB_DST_PW"]
    if key_pw:
        cmd += ["-srckeypass:env", "KB_KEY_PW", "-destkeypass:env", "KB_DST_PW"]
    try:
        res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(f"{prop}: keytool could not convert the JKS store ({type(exc).__name__})") from None
    if res.returncode != 0 or not dst.exists():
        reason = "wrong password?" if "password" in (res.stdout + res.stderr).lower() else "not a valid JKS store?"
        raise InputError(f"{prop}: cannot open the JKS store ({reason})",
                         hint="check the store and its password (ssl.*store.password, ssl.key.password)")
    return dst.read_bytes()


def _load_pkcs12(data: bytes, password: str | None, prop: str) -> Any:
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        return pkcs12.load_pkcs12(data, password.encode() if password else None)
    except (ValueError, TypeError):
        raise InputError(f"{prop}: cannot open the PKCS12 store (wrong password, or not a PKCS12 file)",
                         hint="check the file and its password") from None


def _store_bytes(loc: Path, prop: str) -> bytes:
    try:
        return loc.read_bytes()
    except OSError as exc:
        raise InputError(f"{prop}: cannot read {loc} ({exc.strerror})", hint="check the path and permissions") \
            from None


def trusted_pem(ts: TrustStore) -> str:
    """The trusted certificates of ``ts`` as PEM text (public data)."""
    from cryptography.hazmat.primitives.serialization import Encoding

    if ts.certificates is not None:
        return ts.certificates
    assert ts.location is not None
    data = _store_bytes(ts.location, "ssl.truststore.location")
    if ts.type == "PEM":
        return data.decode("ascii", errors="replace")
    password = _reveal(ts.password)
    with private_dir() as d:
        if _is_jks(data):
            data = _jks_to_pkcs12(data, password, None, "ssl.truststore.location", d)
            password = password or "changeit"
        store = _load_pkcs12(data, password, "ssl.truststore.location")
    certs = [c.certificate for c in store.additional_certs]
    if store.cert is not None:
        certs.insert(0, store.cert.certificate)
    if not certs:
        raise InputError("ssl.truststore.location: the store holds no certificate", hint="import the CA into it")
    return "".join(c.public_bytes(Encoding.PEM).decode() for c in certs)


def _load_client_cert(ctx: ssl.SSLContext, ks: KeyStore) -> None:
    from cryptography.hazmat.primitives.serialization import (
        BestAvailableEncryption,
        Encoding,
        PrivateFormat,
        load_pem_private_key,
    )

    prop = "ssl.keystore.location" if ks.location is not None else "ssl.keystore.key"
    with private_dir() as d:
        if ks.type == "PEM" and ks.location is not None:
            try:
                ctx.load_cert_chain(str(ks.location), password=_reveal(ks.key_password) or "")
            except ssl.SSLError:
                raise InputError(f"{prop}: cannot load the client key and certificate from {ks.location}",
                                 hint="the file must hold the private key and its certificate chain in PEM; "
                                 "an encrypted key needs ssl.key.password") from None
            return
        if ks.type == "PEM":
            assert ks.key is not None and ks.certificate_chain is not None
            kpw = _reveal(ks.key_password)
            try:
                key = load_pem_private_key(ks.key.reveal().encode(), kpw.encode() if kpw else None)
            except (ValueError, TypeError):
                raise InputError("ssl.keystore.key: cannot read the inline private key (wrong ssl.key.password, "
                                 "or not a PEM key)", hint="give a PKCS#8 PEM key; an encrypted one needs "
                                 "ssl.key.password") from None
            chain_pem = ks.certificate_chain.encode()
        else:
            assert ks.location is not None
            data = _store_bytes(ks.location, prop)
            if _is_jks(data):
                data = _jks_to_pkcs12(data, _reveal(ks.password), _reveal(ks.key_password), prop, d)
            store = _load_pkcs12(data, _reveal(ks.password), prop)
            if store.key is None or store.cert is None:
                raise InputError(f"{prop}: the store holds no private key with a certificate",
                                 hint="a client key store needs one key entry (keytool -genkeypair / -importkeystore)")
            key = store.key
            chain = [store.cert.certificate] + [c.certificate for c in store.additional_certs]
            chain_pem = b"".join(c.public_bytes(Encoding.PEM) for c in chain)
        one_time = secrets.token_urlsafe(32)
        key_file, cert_file = d / "key.pem", d / "chain.pem"
        _write_private(key_file, key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8,  # type: ignore[union-attr]
                                                   BestAvailableEncryption(one_time.encode())))
        _write_private(cert_file, chain_pem)
        try:
            ctx.load_cert_chain(str(cert_file), str(key_file), password=one_time)
        except ssl.SSLError:
            raise InputError(f"{prop}: the client certificate does not match its key, or is not PEM",
                             hint="check ssl.keystore.certificate.chain / the store's key entry") from None


def ssl_context(settings: SecuritySettings) -> ssl.SSLContext:
    """The client-side TLS context for ``settings`` (which must use TLS)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    versions = settings.tls_versions
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2 if "TLSv1.2" in versions else ssl.TLSVersion.TLSv1_3
    ctx.maximum_version = ssl.TLSVersion.TLSv1_3 if "TLSv1.3" in versions else ssl.TLSVersion.TLSv1_2
    ctx.check_hostname = settings.check_hostname
    ctx.verify_mode = ssl.CERT_REQUIRED
    ts = settings.truststore
    if ts is None:
        ctx.load_default_certs()
    elif ts.type == "PEM" and ts.location is not None:
        try:
            ctx.load_verify_locations(cafile=str(ts.location))
        except ssl.SSLError:
            raise InputError(f"ssl.truststore.location: {ts.location} holds no PEM certificate",
                             hint="give the CA certificate(s) in PEM, or set ssl.truststore.type=PKCS12/JKS") from None
    else:
        try:
            ctx.load_verify_locations(cadata=trusted_pem(ts))
        except ssl.SSLError:
            raise InputError("ssl.truststore: the certificates do not parse as PEM",
                             hint="each one between -----BEGIN CERTIFICATE----- and -----END CERTIFICATE-----") \
                from None
    if settings.keystore is not None:
        _load_client_cert(ctx, settings.keystore)
    return ctx
