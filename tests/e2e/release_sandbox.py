"""Runs a command of an unpacked release the way its systemd unit would, on a machine that has
the Swift toolchain, without systemd: test_release.py starts it inside a private mount
namespace (`unshare --mount`) and it then

- mounts an empty tmpfs over /opt, which hides the toolchain (/opt/swift), and binds the
  unpacked release at /opt/storekeeper, where the unit's ExecStart points;
- hides /tmp (PrivateTmp), /root and /home (ProtectHome), makes / read-only (an approximation
  of ProtectSystem=strict) and starts in / (WorkingDirectory=/);
- empties the capability bounding set (CapabilityBoundingSet=) and becomes `nobody` (User=);
- loads, with libseccomp, the filters systemd 252 derives from the unit's
  SystemCallFilter= (with SystemCallErrorNumber=), MemoryDenyWriteExecute= and
  RestrictAddressFamilies=, which also sets no_new_privs (NoNewPrivileges=);
- and execs the command with exactly the environment it was given.

usage: release_sandbox.py --release DIR --unit FILE [--hide DIR] [--no-user] -- COMMAND...
The command names binaries by their installed path (/opt/storekeeper/bin/storekeeper).
Runs with the system Python (python3-seccomp). As root; `--no-user` stays root (inside a user
namespace, where `nobody` is not mapped).
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import os
import socket
import subprocess

import seccomp

INSTALLED = "/opt/storekeeper"
PR_CAPBSET_DROP = 24
PROT_WRITE, PROT_EXEC = 0x2, 0x4
SHM_EXEC = 0o100000
# Permitted by systemd whatever the allow list says (seccomp-util.c, "@default" and exec).
ALWAYS = {"execve", "exit", "exit_group", "rt_sigreturn", "sigreturn", "getrlimit"}


def unit_settings(path: str) -> dict[str, list[str]]:
    """The [Service] settings of a unit file; a setting given twice keeps both values."""
    settings: dict[str, list[str]] = {}
    section = ""
    for raw in open(path, encoding="utf-8"):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line
            continue
        if section == "[Service]" and "=" in line:
            key, value = line.split("=", 1)
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def syscall_groups() -> dict[str, list[str]]:
    """Every @group systemd knows and its members, from `systemd-analyze syscall-filter`."""
    out = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True, text=True,
                         check=True).stdout
    groups: dict[str, list[str]] = {}
    current = None
    for line in out.splitlines():
        if line.startswith("@"):
            current = line.strip()
            groups[current] = []
        elif current and line.strip() and not line.strip().startswith("#"):
            groups[current].append(line.strip())
    return groups


def expand(names: list[str], groups: dict[str, list[str]]) -> set[str]:
    result: set[str] = set()
    for name in names:
        if name.startswith("@"):
            if name not in groups:
                raise SystemExit(f"unknown system call group {name}")
            result |= expand(groups[name], groups)
        else:
            result.add(name)
    return result


def add_rule(f: seccomp.SyscallFilter, action, name: str, *args) -> None:
    try:
        f.add_rule(action, name, *args)
    except (RuntimeError, ValueError, OSError):
        pass  # not a system call of this architecture; systemd skips those too


def load_filters(settings: dict[str, list[str]]) -> None:
    groups = syscall_groups()  # before any filter applies to the command that lists them
    if (settings.get("MemoryDenyWriteExecute") or ["no"])[-1] in ("yes", "true", "1", "on"):
        f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
        eperm = seccomp.ERRNO(errno.EPERM)
        both = PROT_WRITE | PROT_EXEC
        add_rule(f, eperm, "mmap", seccomp.Arg(2, seccomp.MASKED_EQ, both, both))
        for name in ("mprotect", "pkey_mprotect"):
            add_rule(f, eperm, name, seccomp.Arg(2, seccomp.MASKED_EQ, PROT_EXEC, PROT_EXEC))
        add_rule(f, eperm, "shmat", seccomp.Arg(2, seccomp.MASKED_EQ, SHM_EXEC, SHM_EXEC))
        f.load()
    families = " ".join(settings.get("RestrictAddressFamilies", [])).split()
    if families:
        allowed = {int(getattr(socket, name)) for name in families}
        f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
        refused = seccomp.ERRNO(errno.EAFNOSUPPORT)
        for family in range(0, 64):
            if family not in allowed:
                add_rule(f, refused, "socket", seccomp.Arg(0, seccomp.EQ, family))
        add_rule(f, refused, "socket", seccomp.Arg(0, seccomp.GE, 64))
        f.load()
    # Last: the allow list does not allow seccomp(2) itself.
    filters = settings.get("SystemCallFilter", [])
    if filters:
        allow = [v for v in filters if not v.startswith("~")]
        deny = [v[1:] for v in filters if v.startswith("~")]
        if len(allow) != len(filters) and allow:
            raise SystemExit("mixed allow and deny SystemCallFilter= lines are not emulated")
        errno_name = (settings.get("SystemCallErrorNumber") or [""])[-1]
        refused = seccomp.ERRNO(getattr(errno, errno_name)) if errno_name else seccomp.KILL_PROCESS
        if allow:
            f = seccomp.SyscallFilter(defaction=refused)
            for name in sorted(expand(" ".join(allow).split(), groups) | ALWAYS):
                add_rule(f, seccomp.ALLOW, name)
        else:
            f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
            for name in sorted(expand(" ".join(deny).split(), groups) - ALWAYS):
                add_rule(f, refused, name)
        f.load()


def mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--release", required=True)
    parser.add_argument("--unit", required=True)
    parser.add_argument("--hide", default="/opt/swift", help="the toolchain's directory")
    parser.add_argument("--no-user", action="store_true")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    settings = unit_settings(args.unit)

    mount("-t", "tmpfs", "-o", "mode=0755,size=1m", "sandbox-opt", "/opt")
    os.mkdir(INSTALLED)
    mount("--bind", args.release, INSTALLED)
    if not args.hide.startswith("/opt/") and os.path.isdir(args.hide):
        mount("-t", "tmpfs", "-o", "ro,mode=0755,size=1m", "sandbox-toolchain", args.hide)
    if os.path.exists(args.hide) and os.listdir(args.hide):
        raise SystemExit(f"{args.hide} is still visible")
    mount("-t", "tmpfs", "-o", "mode=1777,size=16m", "sandbox-tmp", "/tmp")
    for home in ("/root", "/home"):
        if os.path.isdir(home):
            mount("-t", "tmpfs", "-o", "ro,mode=0755,size=1m", "sandbox-home", home)
    mount("-o", "remount,bind,ro", "/")
    mount("-o", "remount,bind,ro", "/opt")
    os.chdir("/")

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(0, 64):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            if ctypes.get_errno() == errno.EINVAL:
                break  # past the last capability this kernel knows
            raise SystemExit(f"PR_CAPBSET_DROP {cap}: {os.strerror(ctypes.get_errno())}")
    if not args.no_user:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    load_filters(settings)
    command = args.command[1:] if args.command[0] == "--" else args.command
    os.execve(command[0], command, dict(os.environ))


if __name__ == "__main__":
    main()
