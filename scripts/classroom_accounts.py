#!/usr/bin/env python
"""Each student's own password for the hub, so nobody can log in under another's name.

    make classroom-accounts CLASSROOM_ROSTER=class.txt   # one name per line; or CLASSROOM_STUDENTS="alice bob"
    make classroom-accounts RESET=alice                  # a new password for alice (she forgot hers)

Every name on the class list, and the teacher (CLASSROOM_TEACHER), gets a random password;
the hub keeps only a salted scrypt hash of each (``STATE/hub/passwords.json``) and admits
exactly those names (scripts/classroom_login.py). The passwords themselves go to
``STATE/hub/password-slips.csv`` and a printable ``password-slips.html`` for the teacher to
hand out, each slip with the hub's address (CLASSROOM_URL, or the hub's own from CLASSROOM_IP
and CLASSROOM_PORT: scripts.classroom_host.hub_address). All three are root's only, in the
root-only ``hub/`` folder. Running it again adds the new names of the list, changes no one's
password and writes the slips again (with the address as it is now); ``--reset NAME`` changes
one. The hub reads the hashes at every login, so nothing needs restarting.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import hmac
import html
import io
import json
import os
import secrets
import sys
from pathlib import Path

from scripts.classroom_host import check_name, hub_address, prepare_state, state_folder, teacher_name

HASHES = "passwords.json"
SLIPS = "password-slips.csv"
PRINTABLE = "password-slips.html"
# scrypt's cost (16 MB, about 0.05 s a login here): Python's documented interactive-login choice
SCRYPT = {"n": 2**14, "r": 8, "p": 1}
# no 0/o, 1/l/i: a slip is read and typed by hand
ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"


def new_password(groups: int = 3, size: int = 4) -> str:
    """A random password such as ``k7dm-x2qa-9rtf`` (12 characters of 31: about 59 bits)."""
    return "-".join("".join(secrets.choice(ALPHABET) for _ in range(size)) for _ in range(groups))


def hash_password(password: str, salt: bytes | None = None) -> str:
    """``scrypt$n$r$p$SALT$HASH`` (hex) of ``password`` with a fresh random salt."""
    salt = secrets.token_bytes(16) if salt is None else salt
    digest = hashlib.scrypt(password.encode(), salt=salt, **SCRYPT)
    return "$".join(["scrypt", str(SCRYPT["n"]), str(SCRYPT["r"]), str(SCRYPT["p"]), salt.hex(), digest.hex()])


def verify(password: str, stored: str) -> bool:
    """Whether ``password`` is the one ``stored`` (from :func:`hash_password`) was made from."""
    _, n, r, p, salt, digest = stored.split("$")
    computed = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p))
    return hmac.compare_digest(computed.hex(), digest)


def roster(environment=os.environ) -> list[str]:
    """The class list: the names in the file CLASSROOM_ROSTER (one a line, ``#`` starts a
    comment), or in CLASSROOM_STUDENTS (separated by spaces); [] when neither is set."""
    if environment.get("CLASSROOM_ROSTER"):
        path = Path(environment["CLASSROOM_ROSTER"])
        if not path.is_file():
            raise FileNotFoundError(f"CLASSROOM_ROSTER={path}: no such file (the class list, one name a line).")
        names = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
    else:
        names = environment.get("CLASSROOM_STUDENTS", "").split()
    names = [name for name in names if name]
    for name in names:
        try:
            check_name(name)
        except ValueError as error:
            raise ValueError(f"the class list names {error}") from None
    return list(dict.fromkeys(names))


def hashes_path(state: Path) -> Path:
    return state / "hub" / HASHES


def read_hashes(path: Path) -> dict[str, str]:
    """Name -> stored hash, from the hub's passwords file; a sentence when it is missing or unreadable."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} does not exist: make the class's accounts first (make classroom-accounts "
                                "CLASSROOM_ROSTER=FILE, README \"A class on one machine\").") from None
    except PermissionError:
        raise PermissionError(f"{path} cannot be read by this user: the hub and make classroom-accounts run as "
                              "root.") from None


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by its owner (root) only, replacing it whole."""
    staging = path.with_name(path.name + ".new")
    staging.unlink(missing_ok=True)
    with os.fdopen(os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as handle:
        handle.write(text)
    staging.replace(path)


def _slips(state: Path) -> dict[str, str]:
    path = state / "hub" / SLIPS
    if not path.is_file():
        return {}
    with path.open(newline="") as handle:
        return {row["name"]: row["password"] for row in csv.DictReader(handle)}


def _save(state: Path, hashes: dict[str, str], slips: dict[str, str]) -> None:
    _write_private(hashes_path(state), json.dumps(hashes, indent=1, sort_keys=True) + "\n")
    write_slips(state, slips)


def write_slips(state: Path, slips: dict[str, str]) -> str:
    """The slips (name -> password) as ``password-slips.csv`` and the printable page, each with
    the hub's address (:func:`scripts.classroom_host.hub_address`); returns the address."""
    address = hub_address()
    table = io.StringIO()
    writer = csv.writer(table)
    writer.writerow(["name", "password", "address"])
    writer.writerows([name, password, address] for name, password in sorted(slips.items()))
    _write_private(state / "hub" / SLIPS, table.getvalue())
    cards = "".join(f'<div class="slip">go to <code>{html.escape(address)}</code><br>name: <b>{html.escape(name)}</b>'
                    f"<br>password: <code>{html.escape(password)}</code></div>\n"
                    for name, password in sorted(slips.items()))
    _write_private(state / "hub" / PRINTABLE, f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Passwords for the course's hub</title><style>
body {{ font-family: sans-serif; }} .slip {{ display: inline-block; width: 19em; margin: .4em; padding: .8em;
border: 1px dashed #555; break-inside: avoid; line-height: 1.6; }} code {{ font-size: 1.2em; }}</style></head><body>
<p>Cut along the lines; give each student their own slip. Open the address on it and log in with the name and
password on it.</p>
{cards}</body></html>
""")
    return address


def add_accounts(state: Path, names: list[str]) -> dict[str, str]:
    """Give every name in ``names`` and the teacher an account unless they have one; return the
    new ones' passwords (existing passwords stay as they are)."""
    (state / "hub").mkdir(mode=0o700, parents=True, exist_ok=True)
    path = hashes_path(state)
    hashes = read_hashes(path) if path.exists() else {}
    slips = _slips(state)
    new = {name: new_password() for name in dict.fromkeys([teacher_name(), *names]) if name not in hashes}
    if new:
        hashes.update({name: hash_password(password) for name, password in new.items()})
        _save(state, hashes, {**slips, **new})
    return new


def reset(state: Path, name: str) -> str:
    """A new password for ``name``, who must have an account; returns it."""
    hashes = read_hashes(hashes_path(state))
    if name not in hashes:
        raise KeyError(f"{name!r} has no account on this hub (the names are in {state / 'hub' / SLIPS}); add them to "
                       "the class list and run make classroom-accounts.")
    password = new_password()
    hashes[name] = hash_password(password)
    _save(state, hashes, {**_slips(state), name: password})
    return password


def class_list_problem(state: Path) -> str | None:
    """Why the class's accounts cannot be made or found (None: they can), in a sentence: a
    class list that is missing or names someone wrongly, or no list and no accounts yet."""
    try:
        names = roster()
    except (FileNotFoundError, ValueError) as error:
        return str(error)
    if not names and not hashes_path(state).exists():
        return ("No class list: name the students with CLASSROOM_ROSTER=FILE (one name a line) or "
                "CLASSROOM_STUDENTS=\"alice bob ...\".")
    return None


def accounts_from_environment(state: Path) -> dict[str, str]:
    """What ``make classroom`` does before the hub starts: the class list's new names get
    accounts (:func:`add_accounts`); without a list, the accounts must exist already. The
    slips are written again, with the hub's address as it is now."""
    problem = class_list_problem(state)
    if problem:
        raise ValueError(problem)
    new = add_accounts(state, roster())
    address = write_slips(state, _slips(state))
    slips = f"{state / 'hub' / PRINTABLE} and {state / 'hub' / SLIPS} (root only), with the hub's address {address}"
    print(f"{len(new)} new accounts ({', '.join(new)}): their passwords are in {slips}" if new else
          f"every name on the class list has an account already: the passwords are in {slips}")
    return new


def class_names(state: Path) -> list[str]:
    """The students of the class: the class list when one is given (:func:`roster`), else every
    name with an account on the hub (``state``) but the teacher's; [] when neither is known."""
    names = roster()
    if not names and hashes_path(state).is_file():
        names = sorted(read_hashes(hashes_path(state)))
    return [name for name in names if name != teacher_name()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reset", metavar="NAME", help="give NAME a new password (the others keep theirs)")
    args = parser.parse_args(argv)
    state = state_folder()
    try:
        if os.geteuid() != 0:
            raise PermissionError("the accounts are root's: run this as root, like make classroom.")
        prepare_state(state)
        if args.reset:
            print(f"{args.reset}'s new password: {reset(state, args.reset)} (also in {state / 'hub' / PRINTABLE})")
        else:
            accounts_from_environment(state)
    except (FileNotFoundError, PermissionError, ValueError) as error:
        print(f"make classroom-accounts: {error}", file=sys.stderr)
        return 1
    except KeyError as error:
        print(f"make classroom-accounts: {error.args[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
