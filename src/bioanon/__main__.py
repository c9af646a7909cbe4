"""``python -m bioanon``: the same as the ``bioanon`` command."""

from .cli import app

app(prog_name="bioanon")
