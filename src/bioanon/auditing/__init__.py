"""Audit a release made by anything: ``bioanon.audit(input, released, control, ...)``.

- :mod:`.inputs`: the three tables read and checked, HOLDOUT split in reference and
  non-member candidates;
- :mod:`.plan`: what the sizes can show, before any attack;
- :mod:`.risks`: the certificate's evaluators played on the release;
- :mod:`.reproduce`: the release process re-run for the shadow-model attacker;
- :mod:`.run`: :func:`audit` and its result; :mod:`.report`: report.json and report.html.

(The package is not named ``audit``: ``bioanon.audit`` is the function.)
"""

from .run import AuditJob, AuditResult, AuditVerdict, audit, prepare_audit, risk_of

__all__ = ["AuditJob", "AuditResult", "AuditVerdict", "audit", "prepare_audit", "risk_of"]
