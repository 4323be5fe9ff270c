"""A real LDAP directory for the hub tests: Debian's slapd on a free 127.0.0.1 port.

A school's directory, as JupyterHub's LDAPAuthenticator meets it: people under
ou=people,<suffix> with a uid and a salted password (slappasswd), bound to by their own DN.
Started in a private folder with its own configuration, stopped by its pid. With `tls`, it
serves LDAPS only, with a certificate for `localhost` signed by a CA made for the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from helpers import free_port, stop_pids

__all__ = ["LdapServer", "SUFFIX", "ldap_server"]

SUFFIX = "dc=cours,dc=test"
_ADMIN_PASSWORD = "admin-annuaire-test"
_SCHEMAS = ("core", "cosine", "inetorgperson")


@dataclass
class LdapServer:
    """A running slapd: its address and the DN template of its people (and its CA, over TLS)."""

    host: str
    port: int
    pid: int
    ca_file: str = ""

    @property
    def people_dn_template(self) -> str:
        return f"uid={{username}},ou=people,{SUFFIX}"


def _ldif(people: dict[str, str]) -> str:
    entries = [
        f"dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\no: Cours\ndc: cours\n",
        f"dn: ou=people,{SUFFIX}\nobjectClass: organizationalUnit\nou: people\n",
    ]
    for uid, password in people.items():
        hashed = subprocess.run(
            ["slappasswd", "-s", password], capture_output=True, text=True, check=True
        ).stdout.strip()
        entries.append(
            f"dn: uid={uid},ou=people,{SUFFIX}\nobjectClass: inetOrgPerson\nuid: {uid}\n"
            f"cn: {uid}\nsn: {uid}\nuserPassword: {hashed}\n"
        )
    return "\n".join(entries)


def _certificates(workdir: Path) -> tuple[Path, Path, Path]:
    """A test CA, and a key and certificate it signs for `localhost`: (ca, key, certificate)."""
    ca_key, ca, key, request, cert = (
        workdir / name for name in ("ca.key", "ca.pem", "slapd.key", "slapd.csr", "slapd.pem")
    )
    run = lambda *args: subprocess.run(["openssl", *args], check=True, capture_output=True)  # noqa: E731
    run(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=CA test",
        "-keyout",
        str(ca_key),
        "-out",
        str(ca),
    )
    run(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        str(key),
        "-out",
        str(request),
    )
    extensions = workdir / "san.cnf"
    extensions.write_text("subjectAltName=DNS:localhost\n")
    run(
        "x509",
        "-req",
        "-in",
        str(request),
        "-CA",
        str(ca),
        "-CAkey",
        str(ca_key),
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        str(extensions),
        "-out",
        str(cert),
    )
    return ca, key, cert


@contextmanager
def ldap_server(workdir: Path, people: dict[str, str], tls: bool = False) -> Iterator[LdapServer]:
    """slapd serving `people` ({uid: password}) on 127.0.0.1 until the block ends."""
    slapd = shutil.which("slapd") or "/usr/sbin/slapd"
    assert Path(slapd).exists(), "slapd manque : lancer `bash .ci/system-deps` (make system-deps)"
    data = workdir / "ldap-data"
    data.mkdir(parents=True)
    tls_lines, ca = [], None
    if tls:
        ca, key, cert = _certificates(workdir)
        tls_lines = [
            f"TLSCACertificateFile {ca}",
            f"TLSCertificateFile {cert}",
            f"TLSCertificateKeyFile {key}",
        ]
    conf = workdir / "slapd.conf"
    conf.write_text(
        "\n".join(
            [
                *(f"include /etc/ldap/schema/{s}.schema" for s in _SCHEMAS),
                f"pidfile {workdir / 'slapd.pid'}",
                "modulepath /usr/lib/ldap",
                "moduleload back_mdb",
                "database mdb",
                f"suffix {SUFFIX}",
                f"rootdn cn=admin,{SUFFIX}",
                f"rootpw {_ADMIN_PASSWORD}",
                f"directory {data}",
                "access to attrs=userPassword by anonymous auth by self write by * none",
                "access to * by * read",
                *tls_lines,
                "",
            ]
        )
    )
    port = free_port()
    url = f"ldaps://localhost:{port}/" if tls else f"ldap://127.0.0.1:{port}/"
    process = subprocess.Popen(
        [slapd, "-d", "0", "-f", str(conf), "-h", url],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        ldif = _ldif(people)
        while True:
            assert process.poll() is None, process.stderr.read().decode(errors="replace")
            added = subprocess.run(
                ["ldapadd", "-x", "-H", url] + ["-D", f"cn=admin,{SUFFIX}", "-w", _ADMIN_PASSWORD],
                input=ldif,
                capture_output=True,
                text=True,
                env={**os.environ, "LDAPTLS_REQCERT": "never"} if tls else None,  # admin side only
            )
            if added.returncode == 0:
                break
            assert time.monotonic() < deadline, added.stderr
            time.sleep(0.3)
        host = "localhost" if tls else "127.0.0.1"
        yield LdapServer(host=host, port=port, pid=process.pid, ca_file=str(ca or ""))
    finally:
        stop_pids([process.pid], grace=10)
        process.wait(timeout=10)
