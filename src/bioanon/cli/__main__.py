"""``python -m bioanon.cli``: the same as the ``bioanon`` command."""

from . import app

app(prog_name="bioanon")
