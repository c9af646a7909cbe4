"""Progress hooks and the library's logger: silent unless configured, as libraries should be.

Long library calls (:func:`bioanon.evaluate`, :func:`bioanon.tuning.grid_search.sweep`,
:func:`bioanon.tuning.k_tuning.tune_k`) take a ``progress=`` hook, a callable
``(done, total, text)``,
and log one record per stage with the elapsed time on the ``bioanon`` logger (a child named
after the call, e.g. ``bioanon.evaluation``). The logger has a :class:`logging.NullHandler`, so
nothing is printed unless the application configures logging:

>>> import logging
>>> logging.basicConfig(level=logging.INFO)          # doctest: +SKIP
>>> bioanon.evaluate(table, "digit", "speaker")      # doctest: +SKIP
INFO:bioanon.evaluation:evaluating: splitting [0/6, 0.0 s]
INFO:bioanon.evaluation:evaluating: anonymizing the train split [1/6, 0.0 s]
...

:class:`StageLog` is the callable behind both: it turns ``(done, total, text)`` calls into one
log record whenever the stage text changes (and at most every :data:`HEARTBEAT` seconds while a
stage keeps reporting), then forwards the call to the caller's own hook (a progress bar).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["HEARTBEAT", "Progress", "StageLog", "Steps", "format_elapsed", "logger", "printer",
           "stages"]

#: the library's root logger; applications attach handlers, the library never does
logger = logging.getLogger("bioanon")
logger.addHandler(logging.NullHandler())

#: a progress hook: ``hook(done, total, text)``
Progress = Callable[[int, int, str], None]

#: seconds after which a stage that keeps reporting with the same text is logged again
HEARTBEAT = 30.0


def format_elapsed(seconds: float) -> str:
    """Elapsed time for a log line.

    Examples
    --------
    >>> format_elapsed(3.14159), format_elapsed(125)
    ('3.1 s', '2 min 05 s')
    """
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes} min {secs:02d} s"


class StageLog:
    """A progress hook that logs one record per stage, with elapsed time, and forwards calls.

    Parameters
    ----------
    name : str
        What runs, the start of every message (``"evaluating"``).
    forward : callable (done, total, text), optional
        Called with every update (e.g. a progress bar's update).
    logger : logging.Logger or str, optional
        Where records go (default: ``bioanon``).
    level : int
        Level of the stage records (``logging.INFO``; nested calls log at DEBUG).
    clock : callable
        Returns seconds (``time.monotonic``); tests pass a fake clock.
    milestones : int, optional
        For item-by-item progress (one update per file, the text its name): a new text is
        logged only at the first update, at each of this many equal steps of ``total``, at
        the last one, and after :data:`HEARTBEAT` seconds without a line (446 files, 10
        milestones: about a dozen lines instead of 446). The forwarded calls (a progress bar)
        are not thinned.

    Examples
    --------
    >>> log = StageLog("sweeping", logger="bioanon.doctest")
    >>> log(0, 2, "g=16"); log(1, 2, "g=32"); log(2, 2, "done")
    >>> log.stage, log.done, log.total
    ('done', 2, 2)
    """

    def __init__(self, name: str, forward: Progress | None = None,
                 logger: logging.Logger | str | None = None, level: int = logging.INFO,
                 clock: Callable[[], float] = time.monotonic,
                 milestones: int | None = None) -> None:
        self.name = name
        self.milestones = milestones
        self.forward = forward
        self.logger = (logging.getLogger(logger) if isinstance(logger, str)
                       else logger or logging.getLogger("bioanon"))
        self.level = level
        self.clock = clock
        self.stage: str | None = None
        self.done = 0
        self.total: int | None = None
        self._start: float | None = None
        self._last_line = 0.0
        self._logged = False

    @property
    def elapsed(self) -> float:
        """Seconds since the first update (0 before it)."""
        return 0.0 if self._start is None else self.clock() - self._start

    def __call__(self, done: int, total: int | None, text: str) -> None:
        now = self.clock()
        if self._start is None:
            self._start = now
        quiet = now - self._last_line >= HEARTBEAT
        changed = text != self.stage or (done != self.done and quiet)
        if changed and self.milestones and total and self._logged and text != "done":
            step = int(self.milestones)
            changed = (quiet or done >= total
                       or done * step // total != self.done * step // total)
        self.done, self.total, self.stage = done, total, text
        if changed and self.logger.isEnabledFor(self.level):
            elapsed = format_elapsed(now - self._start)
            if text == "done":
                msg = f"{self.name}: done in {elapsed}"
            else:
                count = f"{done}/{total}, " if total else ""
                msg = f"{self.name}: {text} [{count}{elapsed}]"
            self.logger.log(self.level, msg, extra={"stage": text, "done": done,
                                                    "total": total,
                                                    "elapsed": now - self._start})
        if changed:
            self._last_line, self._logged = now, True
        if self.forward is not None:
            self.forward(done, total if total is not None else 0, text)

    def nested(self, label: str) -> StageLog:
        """A hook for a long call inside the current step (one sweep point's evaluation).

        Its stages are logged at DEBUG, and a progress bar keeps this step's count while its
        description shows the inner stage (``"g=16: attack panel: knn"``).
        """
        def forward(done: int, total: int, text: str) -> None:
            if self.forward is not None:
                self.forward(self.done, self.total or 0, f"{self.stage}: {text}")

        return StageLog(f"{self.name} {label}", forward, self.logger, logging.DEBUG,
                        self.clock)


class Steps:
    """A call's steps said through a hook as ``(done, total, text)``: ``done`` never goes back
    and never passes ``total``. A planned total that ran short grows with the steps taken
    (never the other way), and a sub-task that counts its own steps (the attack panel's fits)
    takes the place of its one planned step (:meth:`sub`).

    Parameters
    ----------
    hook : callable (done, total, text) or None
        Where the steps are said (None: nowhere).
    total : int
        The steps planned.

    Examples
    --------
    >>> calls = []
    >>> s = Steps(lambda d, t, text: calls.append((d, t)), 2)
    >>> s.tick("a"); s.tick("b"); s.tick("c"); s.finish()
    >>> calls
    [(0, 2), (1, 2), (2, 3), (3, 3)]
    >>> calls.clear(); s = Steps(lambda d, t, text: calls.append((d, t)), 3)
    >>> s.tick("a"); fits = s.sub("panel: "); fits(0, 4, "x"); fits(4, 4, "y"); s.tick("b")
    >>> s.finish(); calls
    [(0, 3), (1, 6), (5, 6), (5, 6), (6, 6)]
    """

    def __init__(self, hook: Progress | None, total: int) -> None:
        self.hook = hook
        self.done = 0
        self.total = max(1, int(total))

    def say(self, text: str) -> None:
        """Say ``text`` at the current step (no step taken)."""
        self.total = max(self.total, self.done)
        if self.hook is not None:
            self.hook(self.done, self.total, text)

    def tick(self, text: str) -> None:
        """Say ``text`` as the next step begins, then count it."""
        self.total = max(self.total, self.done + 1)
        self.say(text)
        self.done += 1

    def sub(self, prefix: str = "") -> Progress:
        """A hook for a sub-task counting its own ``(done, total)``: its ``total`` steps take
        the place of the one step planned for it (the steps planned after it stay)."""
        base, after = self.done, max(self.total - self.done - 1, 0)

        def hook(done: int, total: int, text: str) -> None:
            self.done = max(self.done, base + max(0, min(int(done), int(total))))
            self.total = max(self.total, base + int(total) + after)
            self.say(prefix + text)

        return hook

    def finish(self, text: str = "done") -> None:
        """Say the last step (``done == total``)."""
        self.done = self.total = max(self.total, self.done)
        if self.hook is not None:
            self.hook(self.done, self.total, text)


def printer(name: str = "certifying", stream: TextIO | None = None) -> StageLog:
    """A progress hook that prints the command line's stage lines (``HH:MM:SS name: stage
    [done/total, elapsed]``, one per stage) on ``stream`` (stderr by default), for a script or
    a notebook: ``bioanon.certify(table, roles, progress=printer())``.

    Its lines go to a logger of its own (not the ``bioanon`` logger, not the root logger): the
    application's logging configuration is left as it is.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> hook = printer("searching", out)
    >>> hook(0, 2, "stage 1: noise(sigma=1)")
    >>> out.getvalue().split(" ", 1)[1].rstrip()  # after the clock time
    'searching: stage 1: noise(sigma=1) [0/2, 0.0 s]'

    """
    log = logging.Logger(f"bioanon.printer.{name}", logging.INFO)  # not registered globally
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", datefmt="%H:%M:%S"))
    log.addHandler(handler)
    log.propagate = False
    return StageLog(name, logger=log)


def stages(progress: Progress | None, name: str, logger: str = "bioanon") -> StageLog:
    """The hook a library call uses: the caller's :class:`StageLog` as it is, else a new one
    that logs stages on ``logger`` and forwards to ``progress`` (which may be None).

    Examples
    --------
    >>> hook = stages(None, "evaluating", "bioanon.evaluation")
    >>> stages(hook, "ignored") is hook
    True
    """
    if isinstance(progress, StageLog):
        return progress
    return StageLog(name, progress, logger)
