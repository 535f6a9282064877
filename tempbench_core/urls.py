"""URLs as they may be stored and printed: no credentials, no query values (issue 25, class 5).

A download URL can carry secrets in two places: the userinfo (``user:password@``)
and the query string (``?token=...``, the signature of a pre-signed object-store
URL). Neither may reach a lock file, a provenance record, a report or a
message, so every URL the project shows goes through :func:`redact_url`, and
text that came from somewhere else (an exception raised by :mod:`urllib` that
quotes the URL it was given) through :func:`scrub`.

The redacted form keeps what a reader needs to know where the data came from
(scheme, host, port, path, the names of the query parameters) and is stable, so
two fetches of the same resource with different tokens record the same source.
"""

from __future__ import annotations

import urllib.parse

#: What a secret is replaced with.
MASK = "***"
#: Shorter values are not replaced inside free text: a secret of one or two
#: characters would turn every occurrence of that character into the mask.
_MIN_SECRET = 4


def is_web_url(text: str) -> bool:
    """Whether ``text`` is an http(s) URL (the only kind of URL that is downloaded)."""
    return urllib.parse.urlsplit(text).scheme.lower() in ("http", "https") and "://" in text


def _masked_query(query: str) -> str:
    items = []
    for item in query.split("&"):
        name, eq, value = item.partition("=")
        if eq:
            items.append(f"{name}={MASK}" if value else f"{name}=")
        else:
            # A bare item (``?AbC123``) may itself be the token: it is masked whole.
            items.append(MASK if name else "")
    return "&".join(items)


def redact_url(url: str) -> str:
    """``url`` without userinfo, with every query value and the fragment masked.

    Anything that is not a ``scheme://`` URL (a local path) is returned as it is.

    Examples
    --------
    >>> redact_url("https://alice:pw@host.org:8443/a/b.zip?token=xyz&v=2#frag")
    'https://host.org:8443/a/b.zip?token=***&v=***#***'
    """
    if "://" not in url:
        return url
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # an unparseable URL (a bad IPv6 literal) is shown only by its scheme
        return url.split("://", 1)[0] + "://" + MASK
    netloc = parts.netloc.rpartition("@")[2]
    query = _masked_query(parts.query) if parts.query else ""
    fragment = MASK if parts.fragment else ""
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def url_secrets(url: str) -> list[str]:
    """The secret parts of ``url`` (userinfo, password, query string and values, fragment), longest first."""
    if "://" not in url:
        return []
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return [url]
    found: set[str] = set()
    userinfo, at, _ = parts.netloc.rpartition("@")
    if at:
        found.update({userinfo + "@", userinfo, *userinfo.split(":", 1)})
    if parts.query:
        found.add(parts.query)
        for item in parts.query.split("&"):
            name, eq, value = item.partition("=")
            found.add(value if eq else name)
    if parts.fragment:
        found.add(parts.fragment)
    found |= {urllib.parse.unquote(s) for s in found}
    return sorted((s for s in found if len(s) >= _MIN_SECRET), key=len, reverse=True)


def scrub(text: str, *urls: str) -> str:
    """``text`` with each of ``urls`` replaced by its redacted form and any remaining secret part of them masked."""
    for url in urls:
        if url in text:
            text = text.replace(url, redact_url(url))
        for secret in url_secrets(url):
            text = text.replace(secret, MASK)
    return text
