"""``duet doctor``: what on this machine disturbs timing, each item with its evidence and a fix.

Every check is a function of a ``SysRoot`` (``/`` or a copy of another machine's /proc and /sys)
and, for what only a system call can tell, a ``LiveProbe``; it returns a ``Check``.
"""
from duetbench.host.doctor.model import STATUSES, Check, Setting, Status
from duetbench.host.doctor.report import DoctorReport, run_checks, snapshot
from duetbench.host.doctor.sysroot import SysRoot

__all__ = ["STATUSES", "Check", "DoctorReport", "Setting", "Status", "SysRoot", "run_checks", "snapshot"]
