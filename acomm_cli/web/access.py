"""Who may see the console and who may act through it.

On a loopback address the console is the operator's own: no login, and actions act as
`--as` (or the agent named in the form). On any other address it needs TLS (refused
without, before it listens) and a login: the agent's secret from the directory's
credentials (`acomm agent token NAME`), checked by `credentials.holder`, gives a session
cookie that is HttpOnly, Secure and SameSite=Strict; actions are then the logged-in agent's,
and only an agent with the admin role may act. Every action, on every address, carries a
CSRF token bound to its session (or to the loopback console), and a request whose Origin is
another site is refused."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from dataclasses import dataclass

COOKIE = "acomm_session"
LOGIN_COOKIE = "acomm_login"  # the login form's own CSRF pair, before any session exists
SESSION_MS = 12 * 3600 * 1000


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and `localhost`: reachable from this machine alone."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Session:
    agent: str
    admin: bool
    expires_at: int


class Access:
    """The console's sessions (in memory: a restart logs everyone out) and its CSRF key."""

    def __init__(self, *, login: bool, acting: str | None) -> None:
        self.login = login
        self.acting = acting  # --as, on a console without login
        self._key = secrets.token_bytes(32)
        self._sessions: dict[str, Session] = {}

    def open_session(self, agent: str, admin: bool, now: int) -> str:
        sid = secrets.token_urlsafe(32)
        self._sessions[sid] = Session(agent, admin, now + SESSION_MS)
        return sid

    def session(self, sid: str | None, now: int) -> Session | None:
        if not sid:
            return None
        found = self._sessions.get(sid)
        if found is None or found.expires_at <= now:
            self._sessions.pop(sid, None)
            return None
        return found

    def close_session(self, sid: str | None) -> None:
        if sid:
            self._sessions.pop(sid, None)

    def csrf(self, bound_to: str) -> str:
        """The token a form carries: an HMAC of its session id (or of `loopback`)."""
        return hmac.new(self._key, bound_to.encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, bound_to: str, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(self.csrf(bound_to), token or "")
