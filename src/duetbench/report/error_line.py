"""An error as duet prints it on standard error: one line, "error: what — how to fix"."""
from __future__ import annotations

from duetbench.errors import DuetError


def one_line(text: str) -> str:
    """One line, with any URL's password masked: the last defence for secrets in what we print. A newline in a
    value the user gave (an option, a file name) is shown as \\n."""
    from duetbench.config.campaign_problems import printable
    from duetbench.store.location import mask_credentials

    return printable(mask_credentials(text))


def tell(error: DuetError) -> None:
    """Print `error` on standard error (the program's last line, or one of several: exports that failed)."""
    from rich.console import Console
    from rich.markup import escape

    from duetbench.config.campaign_problems import CampaignError
    from duetbench.store.location import mask_credentials

    # A campaign file's problems are one line each already (their own escapes); user text (commands, keys,
    # paths) may contain [brackets]: escaped, never read as markup.
    line = mask_credentials if isinstance(error, CampaignError) else one_line
    hint = f" [dim]— {escape(line(error.hint))}[/dim]" if error.hint else ""
    Console(stderr=True, highlight=False, emoji=False).print(
        f"[bold red]error:[/bold red] {escape(line(error.message))}{hint}", soft_wrap=True)
