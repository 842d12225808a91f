"""A side in a container whose image runs as a non-root user (`USER 1000` in its Containerfile).

That user cannot open what `duet run` makes for the side as the orchestrator's user: the barrier page
(0600 in /dev/shm) and the side's output directory. Its harness then ran unsynchronized, logged no
iteration, and every run failed with "found no iterations". So the user is learnt once per image before
the first run (`host_uid`), and for each run that uid alone is given access to the page and the output
directory (a POSIX ACL entry, or ownership where the file system has no ACLs and we are root), taken
back after the run (`Grant.revoke`). The page is no more open to anyone else than before.
"""
from __future__ import annotations

import errno
import io
import os
import struct
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from duetbench.execute.container import ContainerEngine

#: Options that change how the container's uids map to the host's: the mapping is then the user's, and
#: nothing is granted (a run whose harness could not open the page still says so, campaign_run.py).
_USERNS_OPTIONS = ("--userns", "--uidmap", "--gidmap", "--subuidname", "--subgidname")


def run_as(options: list[str], image_user: str) -> str:
    """The user the side's command runs as: the last --user/-u among the engine options, else the image's."""
    user = image_user
    args = iter(options)
    for arg in args:
        if arg in ("--user", "-u"):
            user = next(args, user)
        elif arg.startswith("--user="):
            user = arg.removeprefix("--user=")
        elif arg.startswith("-u") and not arg.startswith("--"):
            user = arg[2:].removeprefix("=")
    return user


def image_user(engine: ContainerEngine, image: str) -> str:
    """The image's USER ("" when it names none: root)."""
    try:
        found = subprocess.run([engine.binary, "image", "inspect", "--format", "{{.Config.User}}", "--", image],
                               capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return found.stdout.strip() if found.returncode == 0 else ""


def container_uid(engine: ContainerEngine, image: str, user: str) -> int | None:
    """The uid `user` (an image's USER or a --user: "name", "uid", "name:group", …) has in the container;
    None if it cannot be told (a name the image's /etc/passwd does not list: the engine then refuses to
    start the container, and says why)."""
    name = user.partition(":")[0]
    if name in ("", "root"):
        return 0
    if name.isdigit():
        return int(name)
    return _passwd_uid(_image_file(engine, image, "/etc/passwd"), name)


def _passwd_uid(passwd: str | None, name: str) -> int | None:
    for line in (passwd or "").splitlines():
        fields = line.split(":")
        if len(fields) > 2 and fields[0] == name and fields[2].isdigit():
            return int(fields[2])
    return None


def _image_file(engine: ContainerEngine, image: str, path: str) -> str | None:
    """A file of the image, read from a container created (never started) for it: both engines can `cp`
    out of one, whatever the image contains (no shell needed)."""
    try:
        made = subprocess.run([engine.binary, "create", "--pull=never", "--entrypoint=", "--", image, "/"],
                              capture_output=True, text=True, timeout=120)
        if made.returncode != 0:
            return None
        cid = made.stdout.strip().splitlines()[-1]
        try:
            copied = subprocess.run([engine.binary, "cp", f"{cid}:{path}", "-"], capture_output=True, timeout=120)
        finally:
            subprocess.run([engine.binary, "rm", "-f", cid], capture_output=True, timeout=120)
        with tarfile.open(fileobj=io.BytesIO(copied.stdout)) as tar:
            member = tar.next()
            extracted = tar.extractfile(member) if member is not None else None
            return extracted.read().decode(errors="replace") if extracted is not None else None
    except (OSError, subprocess.TimeoutExpired, tarfile.TarError, IndexError):
        return None


def host_uid(engine: ContainerEngine, uid: int) -> int | None:
    """The host's uid for the container's `uid`: itself where the engine runs as root (rootful podman, a
    docker daemon); through rootless podman's user namespace otherwise (container root is us, uid N≥1 one
    of our subordinate uids). None if that mapping cannot be read."""
    if os.geteuid() == 0 or engine.name != "podman":
        return uid
    try:
        mapped = subprocess.run([engine.binary, "unshare", "cat", "/proc/self/uid_map"], capture_output=True,
                                text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return map_uid(mapped.stdout, uid) if mapped.returncode == 0 else None


def map_uid(uid_map: str, uid: int) -> int | None:
    """`uid` of a user namespace as the host sees it, by its /proc/PID/uid_map ("inside outside count" lines)."""
    for line in uid_map.splitlines():
        fields = line.split()
        if len(fields) == 3 and all(f.isdigit() for f in fields):
            inside, outside, count = map(int, fields)
            if inside <= uid < inside + count:
                return outside + uid - inside
    return None


def grantee(engine: ContainerEngine, image: str, options: list[str], user: str) -> int | None:
    """The host uid to give a side's page and output directory to; None when nothing needs granting (its
    command runs as root) or cannot be (see `container_uid`, `host_uid`)."""
    if any((o == flag or o.startswith(flag + "=")) and o != "--userns=host"  # host: the default mapping
           for o in options for flag in _USERNS_OPTIONS):
        return None
    uid = container_uid(engine, image, run_as(options, user))
    if not uid:
        return None
    found = host_uid(engine, uid)
    return None if found == os.geteuid() else found


_ACL = "system.posix_acl_access"
_USER_OBJ, _USER, _GROUP_OBJ, _MASK, _OTHER = 0x01, 0x02, 0x04, 0x10, 0x20
_NO_ID = 0xFFFFFFFF


@dataclass
class Grant:
    """Access given to `uid` on `path` (an ACL entry, or the path's ownership), until `revoke`."""
    path: Path
    uid: int
    mode: int
    acl: bytes | None  # the ACL the path had before (None: none)
    owner: tuple[int, int] | None  # set when ownership was given instead (no ACLs there)

    def revoke(self, *, give_back: bool = False) -> None:
        """Take the access back; `give_back`: also make what the container's user created under the path
        (its iteration log, result files) the path owner's again. Never raises: the run is measured."""
        try:
            if self.owner is not None:
                os.chown(self.path, *self.owner)
            elif self.acl is None:
                os.removexattr(self.path, _ACL)
            else:
                os.setxattr(self.path, _ACL, self.acl)
            os.chmod(self.path, self.mode)  # an ACL's mask showed as the group's bits
        except OSError:
            pass
        if give_back and self.path.is_dir():
            _give_back(self.path, self.uid)


def grant(path: Path, uid: int, *, search_only: bool = False) -> Grant | None:
    """Give `uid` read and write access (and search, for a directory) to `path`, or only search it
    (`search_only`: a directory on the way to one it writes); None if it cannot be."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    mode = st.st_mode & 0o7777
    try:
        before: bytes | None = os.getxattr(path, _ACL)
    except OSError:
        before = None
    named = 0o1 if search_only else 0o7 if path.is_dir() else 0o6
    # Added to the ACL it has (the user's own, another side's grant), else to one made of its mode.
    entries = dict(_acl_entries(before) if before else [
        ((_USER_OBJ, _NO_ID), mode >> 6 & 7), ((_GROUP_OBJ, _NO_ID), mode >> 3 & 7), ((_OTHER, _NO_ID), mode & 7),
        ((_MASK, _NO_ID), mode >> 3 & 7)])
    entries[(_USER, uid)] = entries.get((_USER, uid), 0) | named
    entries[(_MASK, _NO_ID)] = entries.get((_MASK, _NO_ID), entries[(_GROUP_OBJ, _NO_ID)]) | named
    acl = b"".join(struct.pack("<HHI", tag, perm, who) for (tag, who), perm in sorted(entries.items()))
    try:
        os.setxattr(path, _ACL, struct.pack("<I", 2) + acl)
        return Grant(path, uid, mode, before, None)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.ENOTSUP) or os.geteuid() != 0:
            return None
    try:  # a file system without ACLs: root can lend the path itself (it keeps its own access)
        os.chown(path, uid, -1)
    except OSError:
        return None
    return Grant(path, uid, mode, before, (st.st_uid, st.st_gid))


def searchable(directory: Path, uid: int) -> bool:
    """Whether `uid` may enter `directory` by its mode (its groups unknown: only the owner's and others'
    bits count; an ACL entry of its own is added anyway, harmlessly)."""
    try:
        st = os.stat(directory)
    except OSError:
        return True  # not ours to judge: the engine says what it finds
    return bool(st.st_mode & (0o100 if st.st_uid == uid else 0o001))


def lend_path(outdir: Path, cwd: Path, uid: int) -> list[Grant]:
    """Give `uid` the side's output directory, and search (no more) of the directories from its cwd down to
    it that it cannot enter (a 0700 home, duet's own .duet/… under a umask of 077): inside the container the
    output directory's mount lies under the cwd's, the way to it runs through them. Grants in the order made."""
    grants = [g for g in [grant(outdir, uid)] if g is not None]
    if outdir.is_relative_to(cwd):
        for directory in reversed(outdir.parents):
            if directory.is_relative_to(cwd) and not searchable(directory, uid):
                grants += [g for g in [grant(directory, uid, search_only=True)] if g is not None]
    return grants


def _acl_entries(xattr: bytes) -> list[tuple[tuple[int, int], int]]:
    """A POSIX ACL xattr's entries, as ((tag, id), permissions) (linux/posix_acl_xattr.h, version 2)."""
    return [((tag, who), perm) for tag, perm, who in struct.iter_unpack("<HHI", xattr[4:])]


def _give_back(top: Path, uid: int) -> None:
    owner = os.stat(top)
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            try:
                if os.lstat(path).st_uid == uid:
                    os.lchown(path, owner.st_uid, owner.st_gid)
            except OSError:
                pass  # not ours to change (rootless: a subordinate uid's), but readable: the run is kept
