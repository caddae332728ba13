"""The hub's login: each name on the class list with its own password (scripts.classroom_accounts).

JupyterHub's Authenticator, given the file of salted hashes that ``make classroom-accounts``
writes: a name gets in only with the password made for it, and only names in that file get in
at all (no ``allow_all``). The file is read at every login, so accounts added or reset while
the hub runs count at once.
"""
from __future__ import annotations

import asyncio
from pathlib import Path

from jupyterhub.auth import Authenticator
from traitlets import Bool, Unicode

from scripts.classroom_accounts import hash_password, read_hashes, verify

# checked against when the name is unknown, so a wrong name takes as long as a wrong password
_NOBODY = hash_password("", salt=bytes(16))


class ClassListAuthenticator(Authenticator):
    """Names and passwords from the hashes file ``passwords_file``; nobody else."""

    passwords_file = Unicode(help="the JSON file of name -> salted hash (scripts.classroom_accounts)").tag(config=True)
    any_allow_config = Bool(True)  # check_allowed below is the allow-list: JupyterHub need not warn

    def _hashes(self) -> dict[str, str]:
        return read_hashes(Path(self.passwords_file))

    async def authenticate(self, handler, data):
        name = self.normalize_username(data.get("username", ""))
        stored = self._hashes().get(name)
        right = await asyncio.to_thread(verify, data.get("password", ""), stored or _NOBODY)
        return name if stored and right else None

    def check_allowed(self, username, authentication=None):
        return username in self._hashes()
