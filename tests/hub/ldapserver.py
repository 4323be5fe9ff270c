"""A real LDAP directory for the hub tests: Debian's slapd on a free 127.0.0.1 port.

A school's directory, as JupyterHub's LDAPAuthenticator meets it: people under
ou=people,<suffix> with a uid and a salted password (slappasswd), bound to by their own DN.
Started in a private folder with its own configuration, stopped by its pid.
"""

from __future__ import annotations

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
    """A running slapd: its address and the DN template of its people."""

    host: str
    port: int
    pid: int

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


@contextmanager
def ldap_server(workdir: Path, people: dict[str, str]) -> Iterator[LdapServer]:
    """slapd serving `people` ({uid: password}) on 127.0.0.1 until the block ends."""
    slapd = shutil.which("slapd") or "/usr/sbin/slapd"
    assert Path(slapd).exists(), "slapd manque : lancer `bash .ci/system-deps` (make system-deps)"
    data = workdir / "ldap-data"
    data.mkdir(parents=True)
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
                "",
            ]
        )
    )
    port = free_port()
    process = subprocess.Popen(
        [slapd, "-d", "0", "-f", str(conf), "-h", f"ldap://127.0.0.1:{port}/"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        ldif = _ldif(people)
        while True:
            assert process.poll() is None, process.stderr.read().decode(errors="replace")
            added = subprocess.run(
                ["ldapadd", "-x", "-H", f"ldap://127.0.0.1:{port}/"]
                + ["-D", f"cn=admin,{SUFFIX}", "-w", _ADMIN_PASSWORD],
                input=ldif,
                capture_output=True,
                text=True,
            )
            if added.returncode == 0:
                break
            assert time.monotonic() < deadline, added.stderr
            time.sleep(0.3)
        yield LdapServer(host="127.0.0.1", port=port, pid=process.pid)
    finally:
        stop_pids([process.pid], grace=10)
        process.wait(timeout=10)
