"""``cardaudit serve``: live badges for Hub model repos and a tracking dashboard, on the store.

Nothing here is imported by ``cardaudit --help`` or ``cardaudit audit``: the command imports
this package when it runs. Its dependencies are the ``serve`` extra (Starlette, uvicorn,
Jinja2, APScheduler, cachetools).

- :mod:`.targets`: how a stored target is named in URLs (``org/name``, ``local/<digest>``).
- :mod:`.badges`: the badge of a stored audit (verdict, ``fail_on``), SVG and shields JSON.
- :mod:`.service`: the store, the bounded audit queue, Hub commit resolution, refresh.
- :mod:`.views`: what the dashboard and the model page show, as plain values.
- :mod:`.badge_route`: the badge URLs (a cached badge answered from memory).
- :mod:`.writes`: token-protected tracking over HTTP.
- :mod:`.app`: the Starlette app (pages, JSON, templates, security headers).
"""
