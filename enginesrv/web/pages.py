"""The page (``/``), its files (``/static``) and what the server offers it
(``/config.json``), for every web port: a server's, an event's watch page, a ladder's."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route


def static_dir() -> str:
    """The folder of the page's files, inside the installed package."""
    return str(resources.files("enginesrv.web") / "static")


STATIC_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}
"""The media types of the page's files (others are served as bytes)."""


class StaticFiles:
    """The page's files, read once into memory and answered as whole responses: an answer
    ends when its bytes are written, so an HTTP connection that keeps alive is closed after
    the keep-alive timeout like any other (a streamed file response waits for the client to
    go instead). Each has an ETag, and a request that names it is answered 304."""

    def __init__(self, folder: str) -> None:
        self.files: dict[str, tuple[bytes, str, str]] = {}
        root = Path(folder)
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.suffix in STATIC_TYPES:
                data = path.read_bytes()
                tag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
                name = path.relative_to(root).as_posix()
                self.files[name] = (data, STATIC_TYPES[path.suffix], tag)

    def response(self, name: str, request: Request) -> Response:
        found = self.files.get(name)
        if found is None:
            return PlainTextResponse("not found", status_code=404)
        data, media_type, tag = found
        headers = {"ETag": tag, "Cache-Control": "no-cache"}
        if media_type == "text/html":  # no other site's page may frame it (and its form)
            headers |= {
                "Content-Security-Policy": "frame-ancestors 'none'",
                "X-Frame-Options": "DENY",
            }
        if request.headers.get("if-none-match") == tag:
            return Response(status_code=304, headers=headers)
        return Response(data, media_type=media_type, headers=headers)


def page_routes(features: dict[str, bool], routes: Sequence[BaseRoute]) -> list[BaseRoute]:
    """The page (``/``), its files (``/static``), what this server offers it
    (``/config.json``: ``{"play": bool, "watch": bool}``) and ``routes``."""
    files = StaticFiles(static_dir())

    async def index(request: Request) -> Response:
        return files.response("index.html", request)

    async def static(request: Request) -> Response:
        return files.response(str(request.path_params["name"]), request)

    async def config(request: Request) -> Response:
        del request
        return JSONResponse(features)

    return [
        Route("/", index),
        Route("/config.json", config),
        *routes,
        Route("/static/{name:path}", static),
    ]


def page_app(routes: Sequence[BaseRoute]) -> Starlette:
    """The application of ``routes``; its HTTP answers are gzipped for the browsers that ask
    (the page's modules shrink to about a third)."""
    return Starlette(routes=routes, middleware=[Middleware(GZipMiddleware, minimum_size=1024)])
