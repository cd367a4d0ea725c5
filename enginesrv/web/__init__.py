"""The browser side: ``enginesrv serve --web PORT`` serves the page (``static/``) and the
WebSocket endpoint ``/ws``, where each socket is one protocol session (docs/web.md)."""
