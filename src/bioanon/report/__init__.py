"""Reports: a JSON document and its HTML rendering with charts."""

from .document import Report

__all__ = ["Report"]
