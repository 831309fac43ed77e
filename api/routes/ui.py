"""``GET /_ui``: a small page to search, page and see where a search spent its time.

Plain HTML and one script (``api/static``, package data: no build step). The page only calls the
REST API of the same origin, so it is behind the same authentication as every other route
(``api/auth.py``: the middleware runs before any route)."""
from __future__ import annotations

from importlib import resources

from fastapi import APIRouter
from fastapi.responses import Response

router = APIRouter()

_FILES = {"ui.html": "text/html; charset=utf-8", "ui.js": "text/javascript; charset=utf-8"}


def _static(name: str) -> Response:
    body = resources.files("shardsearch.api").joinpath("static", name).read_bytes()
    return Response(body, media_type=_FILES[name],
                    headers={"cache-control": "no-cache", "x-content-type-options": "nosniff"})


@router.get("/_ui")
async def ui_page() -> Response:
    return _static("ui.html")


@router.get("/_ui/ui.js")
async def ui_script() -> Response:
    return _static("ui.js")
