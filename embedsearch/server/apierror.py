"""The one error the API's routes raise on purpose: status, message, parameter at fault."""

from __future__ import annotations

__all__ = ["ApiError"]


class ApiError(Exception):
    """A request the API refuses: HTTP status, message, and the parameter at fault."""

    def __init__(self, status: int, detail: str, parameter: str | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.parameter = status, detail, parameter
