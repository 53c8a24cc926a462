"""User-facing errors: one line, exit code 2, never a traceback."""
from __future__ import annotations

EXIT_USAGE = 2


class UserError(Exception):
    """Bad input the user can fix; the message says where and how.

    Convention: ``<file>[:line:col]: [cell '<name>': ][key '<key>': ]<what is wrong>; <the fix>``.
    """

    exit_code = EXIT_USAGE
